"""Reading runs back for people: the store opened briefly (never created), the summary printed as text
or JSON, and, while a run holds a DuckDB store, the progress it publishes beside the file."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import typer

from envscaler.cli_name import cli_call, cli_command
from envscaler.commands._common import fail
from envscaler.prefect_server import pid_alive

EXIT_BUDGET = 3
"""`run`/`resume` exit code when the run stopped on its budget (resumable, not an error)."""
EXIT_EMPTY = 4
"""`run`/`resume` exit code when the run finished but produced nothing to train on (status `empty`)."""


READ_WAIT_S = 3.0


def open_for_reading(url: str, wait_s: float = READ_WAIT_S) -> Any:
    """Open an existing store (never created). Another read-only verb may hold a DuckDB file for a moment:
    wait briefly for it; a file held by a run stays locked, and that StoreError is the caller's to handle."""
    import time

    from envscaler_core.store import Store, StoreError

    deadline = time.monotonic() + wait_s
    while True:
        try:
            return Store.from_url(url, create=False)
        except StoreError as exc:
            if not is_locked(exc) or published_progress(url) or time.monotonic() >= deadline:
                raise
            time.sleep(0.2)


@contextmanager
def open_store(url: str, run_id: str | None = None, to_work_on: bool = False) -> Iterator[Any]:
    """A read-only verb's store: a missing DuckDB file is an error (naming the run asked for), never created.
    `to_work_on` (`resume`): a store held by `run_id` itself is refused as `run` refuses a run held elsewhere."""
    from envscaler_core.store import StoreError, StoreMissing

    try:
        store = open_for_reading(url)
    except StoreMissing as exc:
        fail(f"no run {run_id!r}: {exc}" if run_id else str(exc))
    except StoreError as exc:
        fail((to_work_on and held_by_the_run(url, exc, run_id)) or held_message(url, exc, run_id))
    try:
        yield store
    finally:
        store.close()


def held_message(url: str, exc: Exception, run_id: str | None = None) -> str:
    """A locked store named by the run(s) holding it, when they publish their progress."""
    active = published_progress(url) if is_locked(exc) else []
    if not active:
        return str(exc)
    names = ", ".join(f"{p.run_id} ({p.status}, pid {p.pid})" for p in active)
    wanted = f"run {run_id!r} can be read when it has finished; " if run_id and all(p.run_id != run_id for p in active) \
        else ""
    return f"the store is held by run {names}: {wanted}`{cli_call('status')}` shows the active runs' live figures"


def held_by_the_run(url: str, exc: Exception, run_id: str | None) -> str | None:
    """A DuckDB store locked by a live process that works on `run_id` itself: the refusal `run` gives a run
    held elsewhere (naming that process), for a verb that came to work on the run; else None."""
    same = [p for p in published_progress(url) if p.run_id == run_id] if run_id and is_locked(exc) else []
    if not same:
        return None
    from envscaler_core.store.claims import WHOLE, refusal

    return (refusal(run_id or "", WHOLE, [f"envscaler pid {p.pid} on this host, {p.status}" for p in same])
            + "; a DuckDB store takes one process at a time: shards need a PostgreSQL store")


def is_locked(exc: Exception) -> bool:
    return "already open in another process" in str(exc)


ACTIVE = ("starting", "running")


def held_while_running(url: str) -> bool:
    """A DuckDB file is held by the process running on it for the run's whole life: once we could open
    it, no run is going on there (a server store is shared, so it cannot tell)."""
    from envscaler_core.store.urls import parse_store_url

    return parse_store_url(url).backend == "duckdb"


def unrecorded_path(url: str, run_id: str) -> Path:
    """Where a run's end that its store could not record is kept: under ENVSCALER_DATA_DIR, not beside the
    store, whose disk is the likely culprit (a full disk took the run row and the progress file at once)."""
    import hashlib

    from envscaler_core.config import envscaler_data_dir
    from envscaler_core.store.urls import human_store

    key = hashlib.sha256(human_store(url).encode()).hexdigest()[:16]
    return envscaler_data_dir() / "unrecorded" / key / f"{run_id}.json"


def note_unrecorded(url: str, run_id: str, status: str, error: str) -> Path | None:
    """Keep the end of a run whose store refused to record it; the path, or None if that failed too."""
    from envscaler_core.models.base import utcnow
    from envscaler_core.pipeline.progress import write_text_atomic

    path = unrecorded_path(url, run_id)
    try:
        write_text_atomic(path, json.dumps({"run_id": run_id, "status": status, "error": error,
                                            "at": utcnow().isoformat()}))
    except OSError:
        return None
    return path


def unrecorded_end(url: str, run_id: str, since: Any = None) -> dict[str, Any] | None:
    """The end noted for a run its store could not record, if it is newer than the row (`since`, its
    updated_at): a later resume that wrote the row again makes the note old news."""
    from datetime import UTC, datetime

    try:
        note = json.loads(unrecorded_path(url, run_id).read_text())
        at = datetime.fromisoformat(note["at"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if since is not None:
        row = since if since.tzinfo else since.replace(tzinfo=UTC)
        if (at if at.tzinfo else at.replace(tzinfo=UTC)) < row:
            return None
    return note


def gone_verdict(run_id: str, status: str, evaluation: bool, url: str, updated_at: Any = None) -> tuple[str, str] | None:
    """(status, reason) to show for a run recorded as running in a DuckDB file no process holds; None when the
    row can be believed. A run that failed on an error its store could not record (a full disk) shows that
    failure, noted beside the user's data (`note_unrecorded`); any other is shown interrupted, killed."""
    why = killed_reason(run_id, status, evaluation, url)
    if why is None:
        return None
    note = unrecorded_end(url, run_id, updated_at)
    if note is None:
        return "interrupted", why
    from envscaler.cli_name import resume_call

    return (str(note.get("status") or "failed"),
            f"{note.get('error')} (the store could not record this end; it was kept in {unrecorded_path(url, run_id)}); "
            f"continue it with `{resume_call(run_id, url)}` once the store can be written")


def killed_reason(run_id: str, status: str, evaluation: bool, url: str) -> str | None:
    """Why a run recorded as running in a DuckDB file no process holds is shown as interrupted: it was
    killed before it could say so (None when the row can be believed). The stored row stays as it is:
    only the resume changes it."""
    if status not in ACTIVE:
        return None
    shared = not held_while_running(url)
    if shared and not nobody_works_on(url, run_id):
        return None
    from envscaler.cli_name import resume_call
    from envscaler_core.config import store_option

    how = (f"`{cli_call('eval', 'bfcl-mt', '--run-id', run_id, tail=store_option(url))}` with its options" if evaluation
           else f"`{resume_call(run_id, url)}`")
    if shared:
        return (f"no process works on it although it was {status} (no process or shard holds its claim: they ended "
                f"without recording it, e.g. the store was lost under them, or were killed); continue it with {how}"
                + ("" if evaluation else ", or trigger its shards again"))
    return f"its process is gone (killed?) while it was {status}; continue it with {how}"


def nobody_works_on(url: str, run_id: str) -> bool:
    """A shared (PostgreSQL) store: no live process holds the run's claim (envscaler_core/store/claims.py),
    so a row still saying running outlived its processes. False when that cannot be asked (the row is
    then believed, as before)."""
    from envscaler_core.store import Store
    from envscaler_core.store.claims import unclaimed

    try:
        store = Store.from_url(url, create=False)
    except Exception:  # noqa: BLE001 - status must still print what the row says
        return False
    try:
        return unclaimed(store, run_id)
    except Exception:  # noqa: BLE001
        return False
    finally:
        store.close()


def is_active(progress: Any) -> bool:
    """A published progress whose run is still going (its process alive)."""
    return progress is not None and progress.status in ACTIVE and pid_alive(progress.pid)


def published_progress(store_url: str) -> list[Any]:
    """Progress files of the runs whose processes are alive, newest first (for a locked store)."""
    from envscaler_core.config import envscaler_data_dir
    from envscaler_core.pipeline.progress import progress_path, read_progress

    folder = progress_path(store_url, "x", envscaler_data_dir()).parent
    found = [read_progress(p) for p in sorted(folder.glob("*.json"))] if folder.is_dir() else []
    live = [p for p in found if p is not None and is_active(p)]
    return sorted(live, key=lambda p: p.updated_at, reverse=True)


def run_progress(store_url: str, run_id: str) -> Any:
    from envscaler_core.config import envscaler_data_dir
    from envscaler_core.pipeline.progress import progress_path, read_progress

    return read_progress(progress_path(store_url, run_id, envscaler_data_dir()))


def with_store_in_hints(error: str | None, run_id: str, url: str | None) -> str | None:
    """A stored error's `envscaler resume RUN` hint (written by the flow, or by a version that left the
    store out) as it must be pasted: naming the store when it is not the default one."""
    if not error:
        return error
    from envscaler.cli_name import resume_call

    return re.sub(rf"`envscaler resume {re.escape(run_id)}`", lambda _: f"`{resume_call(run_id, url)}`", error)


def summary_json(s: Any) -> str:
    """A RunSummary as `--json` prints it, whether the run finished or stopped."""
    return json.dumps(s.model_dump(mode="json") | {"tokens": s.tokens, "cached_tokens": s.cached_tokens,
                                                   "cost_usd": s.cost_usd}, indent=2)


def print_stopped_summary(store: Any, run_id: str) -> None:
    """For `--json`: the summary of a run that stopped (a rejected request, a failure, an interrupt) on
    stdout, as a finished run's is, before the error line on stderr. Before, such a run printed nothing
    on stdout although the store held its funnel. Never raises: the store may be what failed."""
    from envscaler_core.pipeline.report import build_summary

    try:
        if store.get_run(run_id) is None:
            return
        text = summary_json(build_summary(store, run_id))
    except Exception:  # noqa: BLE001 - a store that cannot be read: the error line alone says what happened
        return
    typer.echo(text)


def print_summary(summary: dict[str, Any], as_json: bool, *, final: bool = False, store_url: str | None = None) -> None:
    """Print the summary; a run stopped by its budget exits 3 with the resume hint; with `final` (the
    command that ran it), a run that produced nothing exits 4. `store_url`: the run's store, named in
    every resume hint printed when it is not the default one."""
    from envscaler.cli_name import resume_call
    from envscaler_core.config import store_option
    from envscaler_core.pipeline.report import RunSummary, summary_text

    s = RunSummary.model_validate(summary)
    s = s.model_copy(update={"error": with_store_in_hints(s.error, s.run_id, store_url)})
    if as_json:
        typer.echo(summary_json(s))
    else:
        typer.echo(summary_text(s, cli_command()[0]))
    if s.status == "stopped_budget":
        if s.evaluation is not None:  # an evaluation resumes through `eval`, with its budget in its config
            typer.echo(f"stopped: budget spent; continue with `{cli_call('eval', 'bfcl-mt', '--run-id', s.run_id, tail=store_option(store_url))}` "
                       "and its options, with a larger budget.max_tokens / budget.max_cost_usd (-c or "
                       "ENVSCALER_BUDGET__MAX_TOKENS)", err=True)
        else:
            typer.echo(f"stopped: budget spent; continue with `{resume_call(s.run_id, store_url, ' --max-tokens N')}` "
                       "(or --max-cost USD)", err=True)
        raise typer.Exit(EXIT_BUDGET)
    if final and s.status == "empty":
        first = s.notes[0].split(" — ")[0] if s.notes else "see the funnel"
        typer.echo(f"finished, but produced nothing ({first}; the note in the summary says why); exit {EXIT_EMPTY}",
                   err=True)
        raise typer.Exit(EXIT_EMPTY)


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

