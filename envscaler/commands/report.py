"""`envscaler report RUN_ID`: write the run's report, one self-contained HTML file (no network needed to
open it), and print its absolute path. An evaluation run gets its results page. Exit 2 for an unknown
run or a store that cannot be read."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from envscaler.commands._common import DB_HELP, fail


def register(app: typer.Typer, verb: str, help_text: str) -> None:
    @app.command(verb, help=help_text)
    def report(
        run_id: str = typer.Argument(..., help="The run to report on."),
        out: Path | None = typer.Option(None, "--out", "-o", help="HTML file to write (default: report.html in the "
                                        "run's output directory, <out_dir>/<RUN_ID>/, beside the store)."),
        db: str | None = typer.Option(None, "--db", help=DB_HELP),
        config: Path | None = typer.Option(None, "--config", "-c", help="Settings file (.toml/.json/.yaml); see "
                                           "docs/configuration.md."),
    ) -> None:
        from envscaler.runner import settings_from, sigterm_as_interrupt
        from envscaler.status import gone_verdict, open_store
        from envscaler_core.report import write_report
        from envscaler_core.store.urls import human_store

        settings = settings_from(config, db)
        with open_store(settings.store.url, run_id) as store:
            run = store.get_run(run_id)
            if run is None:
                known = [r.run_id for r in store.list_runs()][-5:]
                fail(f"no run {run_id!r} in {human_store(store.url)}"
                     + (f"; recent runs: {', '.join(known)}" if known else ""))
            target = out.expanduser().resolve() if out is not None else default_target(run, settings)
            if is_database(target):
                fail(f"{target} is a database file (the store?): the report would replace it; pass --out <file>.html")
            if out is not None:
                check_out(target)
            verdict = gone_verdict(run_id, run.status, "eval" in run.config, settings.store.url, run.updated_at)
            killed = verdict[1] if verdict else None
            try:
                with sigterm_as_interrupt():
                    written = write_report(store, run_id, target, killed=killed)
            except KeyboardInterrupt:  # the page is written whole or not at all (atomic): say which
                typer.echo(f"interrupted: the report of run {run_id} was not written ({target} is unchanged)", err=True)
                raise typer.Exit(130) from None
            except OSError as exc:
                fail(f"cannot write the report to {target}: {exc.strerror or exc}; pass --out <writable file>")
        typer.echo(str(written))


def check_out(target: Path) -> None:
    """An explicit --out is written only where it cannot destroy anything: a new file in an existing
    directory, or a report this command wrote before (`report --out src/tasks.jsonl` replaced a source
    file with HTML, exit 0; a missing parent directory used to be created, whole trees of it)."""
    from envscaler_core.shell import shell_word

    if target.is_dir():
        fail(f"--out {target} is a directory; pass --out <file>.html (e.g. --out {shell_word(target / 'report.html')})")
    if not target.parent.is_dir():
        what = "is not a directory" if target.parent.exists() else "does not exist"
        fail(f"--out {target}: the directory {target.parent} {what}; create it first, or pass --out <file>.html "
             "in an existing directory")
    if target.exists() and not is_report(target):
        fail(f"--out {target} exists and is not a report envscaler wrote: the report would replace it; pass "
             "--out <new file>.html (or remove the file first)")


def is_report(path: Path) -> bool:
    """A page `report` wrote (its generator tag, or the title earlier versions wrote, in its head)."""
    from envscaler_core.report.page import GENERATOR

    try:
        with path.open("rb") as fh:
            head = fh.read(4096).decode("utf-8", errors="replace")
    except OSError:
        return False
    if not head.startswith("<!doctype html><html lang=en><head><meta charset=utf-8>"):
        return False
    return GENERATOR in head or "<title>EnvScaler run " in head or "<title>BFCL evaluation " in head


def is_database(path: Path) -> bool:
    """A DuckDB file (its header says DUCK at byte 8) or a SQLite one: `report -o <store>` replaced the
    whole store with HTML and exited 0 (an outside check)."""
    try:
        with path.open("rb") as fh:
            head = fh.read(16)
    except OSError:
        return False
    return head[8:12] == b"DUCK" or head.startswith(b"SQLite format 3")


def default_target(run: Any, settings: Any) -> Path:
    """Where the run's own outputs are: the report it wrote, else beside its exports, else its output dir."""
    from envscaler_core.config import outputs_root

    if run.outputs.get("report"):
        return Path(run.outputs["report"])
    if run.outputs.get("exports"):
        return Path(run.outputs["exports"]) / "report.html"
    own = (run.config.get("flow") or {}).get("out_dir")
    if own:
        settings = settings.model_copy(update={"flow": settings.flow.model_copy(update={"out_dir": own})})
    return outputs_root(settings) / run.run_id / "report.html"
