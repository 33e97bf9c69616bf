"""Reading runs back for people: the store opened briefly (never created), the summary printed as text
or JSON, and, while a run holds a DuckDB store, the progress it publishes beside the file."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import typer

from envscaler.commands._common import fail

EXIT_BUDGET = 3
"""`run`/`resume` exit code when the run stopped on its budget (resumable, not an error)."""


@contextmanager
def open_store(url: str, run_id: str | None = None) -> Iterator[Any]:
    """A read-only verb's store: a missing DuckDB file is an error (naming the run asked for), never created."""
    from envscaler_core.store import Store, StoreError, StoreMissing

    try:
        store = Store.from_url(url, create=False)
    except StoreMissing as exc:
        fail(f"no run {run_id!r}: {exc}" if run_id else str(exc))
    except StoreError as exc:
        fail(str(exc))
    try:
        yield store
    finally:
        store.close()


def is_locked(exc: Exception) -> bool:
    return "already open in another process" in str(exc)


def pid_alive(pid: int | None) -> bool:
    if not pid:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def published_progress(store_url: str) -> list[Any]:
    """Progress files of the runs whose processes are alive, newest first (for a locked store)."""
    from envscaler_core.config import envscaler_data_dir
    from envscaler_core.pipeline.progress import progress_path, read_progress

    folder = progress_path(store_url, "x", envscaler_data_dir()).parent
    found = [read_progress(p) for p in sorted(folder.glob("*.json"))] if folder.is_dir() else []
    live = [p for p in found if p is not None and p.status == "running" and pid_alive(p.pid)]
    return sorted(live, key=lambda p: p.updated_at, reverse=True)


def run_progress(store_url: str, run_id: str) -> Any:
    from envscaler_core.config import envscaler_data_dir
    from envscaler_core.pipeline.progress import progress_path, read_progress

    return read_progress(progress_path(store_url, run_id, envscaler_data_dir()))


def print_summary(summary: dict[str, Any], as_json: bool) -> None:
    """Print the summary; a run stopped by its budget exits 3 with the resume hint."""
    from envscaler_core.pipeline.report import RunSummary, summary_text

    s = RunSummary.model_validate(summary)
    if as_json:
        typer.echo(json.dumps(s.model_dump(mode="json") | {"tokens": s.tokens, "cached_tokens": s.cached_tokens,
                                                           "cost_usd": s.cost_usd}, indent=2))
    else:
        typer.echo(summary_text(s))
    if s.status == "stopped_budget":
        typer.echo(f"stopped: budget spent; continue with `envscaler resume {s.run_id} --max-tokens N` "
                   "(or --max-cost USD)", err=True)
        raise typer.Exit(EXIT_BUDGET)


def run_table(runs: list[Any]) -> list[str]:
    """Aligned columns: id, status, last stage, started, last update (local time)."""
    rows = [(r.run_id, r.status, r.stage or "-", _local(r.created_at), _local(r.updated_at)) for r in runs]
    header = ("RUN", "STATUS", "STAGE", "STARTED", "UPDATED")
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    return ["  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip() for row in [header, *rows]]


def _local(moment: Any) -> str:
    from datetime import UTC

    aware = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    return aware.astimezone().strftime("%Y-%m-%d %H:%M:%S")


def progress_text(progress: Any) -> str:
    from envscaler_core.pipeline.progress_text import headline, progress_lines

    return "\n".join([headline(progress), *progress_lines(progress)])

