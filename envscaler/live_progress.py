"""`envscaler run`'s live progress: a rich table on a terminal, a plain line every few seconds off one,
nothing with `--quiet`. It reads the progress file the flow publishes (the same one `status --watch`
reads), from a background thread, so the display can never slow or stop the run."""

from __future__ import annotations

import sys
import threading
from pathlib import Path
from typing import Any, TextIO

from envscaler_core.models.progress import RunProgress
from envscaler_core.pipeline.progress import read_progress
from envscaler_core.pipeline.progress_text import duration, headline, items, step_line, tokens

PLAIN_EVERY_S = 10.0


def progress_table(progress: RunProgress) -> Any:
    """The rich renderable: one row per step, the current one with a bar."""
    from rich.progress_bar import ProgressBar
    from rich.table import Table

    table = Table(title=f"{progress.run_id} · {progress.status} · {duration(progress.elapsed_s)}",
                  title_justify="left", expand=False, box=None, padding=(0, 1))
    for column, justify in (("step", "left"), ("", "left"), ("items", "right"), ("failed", "right"),
                            ("LLM calls", "right"), ("tokens", "right"), ("cost (mock)" if progress.mock_llm else "cost", "right"), ("time", "right")):
        table.add_column(column, justify=justify)  # type: ignore[arg-type]
    for step in progress.steps:
        done = step.finished_at is not None
        bar = ProgressBar(total=float(step.total or 1), completed=float(step.done + step.failed if step.total
                                                                      else (1 if done else 0)), width=20)
        table.add_row(step.name if done else f"[bold]{step.name}[/]", bar, items(step), str(step.failed or ""),
                      str(step.llm_calls), tokens(step.tokens), f"${step.cost_usd:.4f}", duration(step.elapsed_s))
    table.add_row("total", "", "", str(sum(s.failed for s in progress.steps) or ""), str(progress.llm_calls),
                  tokens(progress.tokens), f"${progress.cost_usd:.4f}", duration(progress.elapsed_s), style="bold")
    return table


class LiveProgress:
    """Context manager around a run: starts the display thread, stops it (and draws a last frame) after."""

    def __init__(self, path: Path, *, quiet: bool = False, stream: TextIO | None = None,
                 tty: bool | None = None, every_s: float = PLAIN_EVERY_S) -> None:
        self.path, self.quiet = path, quiet
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty() if tty is None else tty
        self.every_s = every_s
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._finished: set[str] = set()

    def __enter__(self) -> LiveProgress:
        if not self.quiet:
            self._thread = threading.Thread(target=self._rich if self.tty else self._plain,
                                            name="envscaler-progress", daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2)

    def _rich(self) -> None:
        from rich.console import Console
        from rich.live import Live

        console = Console(file=self.stream, stderr=True)
        with Live(console=console, refresh_per_second=4, transient=False, redirect_stdout=False,
                  redirect_stderr=False) as live:
            while True:
                progress = read_progress(self.path)
                if progress is not None:
                    live.update(progress_table(progress))
                if self._stop.wait(0.25):
                    progress = read_progress(self.path)
                    if progress is not None:
                        live.update(progress_table(progress))
                    return

    def _plain(self) -> None:
        waited = self.every_s
        while not self._stop.wait(0.5):
            waited += 0.5
            progress = read_progress(self.path)
            if progress is None:
                continue
            self._print_finished(progress)
            if waited >= self.every_s:
                waited = 0.0
                self._write(headline(progress))
        progress = read_progress(self.path)
        if progress is not None:
            self._print_finished(progress)

    def _print_finished(self, progress: RunProgress) -> None:
        for step in progress.steps:
            if step.finished_at is not None and step.name not in self._finished:
                self._finished.add(step.name)
                self._write(f"step {step_line(step, progress.mock_llm)}")

    def _write(self, line: str) -> None:
        try:
            self.stream.write(line + "\n")
            self.stream.flush()
        except (OSError, ValueError):  # a closed pipe must not kill the run
            self._stop.set()
