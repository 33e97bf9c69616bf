"""What `run`, `resume` and `demo` share: settings from flags, the source check, and running the factory
flow with one-line errors instead of tracebacks for the failures users cause (bad config, bad key, no
endpoint, a locked or uncreatable database), a live progress display, and a Ctrl-C that stops.

Ctrl-C: the terminal sends SIGINT to the whole foreground process group. The Prefect server we start
lives in its own session, so only this process gets it; asyncio cancels the flow, the stages abandon
their in-flight items (finished ones are already stored), the run is marked `interrupted`, the flow
reports its final state to the still-running server, and only then is the server stopped. A second
Ctrl-C (or SIGTERM) while it stops is answered and ignored, so the answers already on their way are
still recorded; a third quits at once (`stop_signals`)."""

from __future__ import annotations

import contextlib
import os
import secrets
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import typer

from envscaler.cli_name import cli_call, resume_call
from envscaler.commands._common import fail
from envscaler.endpoint import check_endpoint
from envscaler.prefect_session import configured_api_problem, drain_prefect, prefect_api
from envscaler.store_claim import claimed_store, publish_starting
from envscaler_core.config import ConfigError, Settings, load_settings, public_config

EXIT_INTERRUPTED = 130
EXIT_TERMINATED = 143  # 128 + SIGTERM, what a shell reports for a process SIGTERM ended
__all__ = ["EXIT_INTERRUPTED", "EXIT_TERMINATED", "RunRequest", "check_endpoint", "claimed_store", "drain_prefect", "flow_session",
           "new_run_id", "prefect_api", "run_factory", "settings_from", "source_paths"]


def new_run_id(prefix: str = "run") -> str:
    return f"{prefix}-{datetime.now(UTC):%Y%m%d-%H%M%S}-{secrets.token_hex(2)}"


def settings_from(config: Path | None, db: str | None = None, overrides: dict[str, Any] | None = None) -> Settings:
    extra = dict(overrides or {})
    if db is not None:  # --db '' is a mistake to report, not the default store
        extra["store"] = {"url": db}
    try:
        return load_settings(config, overrides=extra)
    except ConfigError as exc:
        fail(str(exc))


def say(message: str, quiet: bool = False) -> None:
    """Progress-type information goes to stderr, so stdout stays the summary (or its JSON)."""
    from envscaler.terminal_text import visible

    if not quiet:
        typer.echo(visible(message), err=True)


def source_paths(sources: list[Path]) -> list[str]:
    """Absolute paths of the source files, each once, or exit 2 naming the bad ones (checked first: it is the
    cheapest mistake to report). A path that exists but is no regular file is said to be what it is: "not
    found" sent people looking for a typo in a directory's name."""
    problems = {kind: [str(p) for p in sources if source_kind(Path(p)) == kind]
                for kind in ("not found", "is a directory", "is not a regular file")}
    if problems["not found"]:
        fail(f"source file(s) not found: {', '.join(problems['not found'])}")
    if problems["is a directory"]:
        fail(f"source {', '.join(problems['is a directory'])} is a directory; give the task file(s) in it "
             "(-s DIR/tasks.jsonl, repeatable)")
    if problems["is not a regular file"]:
        fail(f"source {', '.join(problems['is not a regular file'])} is not a regular file (a FIFO, socket or "
             "device); save the tasks to a file first")
    # one file given several times (-s a.jsonl -s ./a.jsonl) is one source: read, counted and listed once
    return list(dict.fromkeys(str(Path(p).resolve()) for p in sources))


def source_kind(path: Path) -> str:
    """"file", "not found", "is a directory" or "is not a regular file" (stat follows symlinks)."""
    import stat

    try:
        mode = path.stat().st_mode
    except (FileNotFoundError, NotADirectoryError):
        return "not found"
    except OSError:
        return "file"  # unreadable: the source check says why, with the file's name
    if stat.S_ISDIR(mode):
        return "is a directory"
    return "file" if stat.S_ISREG(mode) else "is not a regular file"


def check_sources(sources: list[str], settings: Settings) -> list[str]:
    """Read every source file before anything is written (the store is not even created): exit 2 on a file
    that yields no task, an unreadable format, or (strict) a malformed record; else the report's lines."""
    from envscaler_core.mine.source_report import inspect_sources, report_lines, source_errors

    report = inspect_sources(sources, settings.mine.max_tasks, settings.mine.max_task_chars)
    errors = source_errors(report, strict=settings.mine.strict_sources)
    if errors:
        more = f" (and {len(errors) - 1} more problem(s))" if len(errors) > 1 else ""
        fail(errors[0] + more)
    return report_lines(report)


@contextlib.contextmanager
def flow_session(settings: Settings, quiet: bool = False) -> Iterator[Any]:
    """What every verb that runs a flow needs around it: Prefect without telemetry and with a one-line
    console, the store claimed in this process (a DuckDB file another run holds fails here, before
    anything is recorded), and a Prefect API (see `prefect_session`)."""
    from envscaler.console import prefect_cli_environment, quiet_prefect_console

    prefect_cli_environment()
    with claimed_store(settings) as store, prefect_api(quiet):
        quiet_prefect_console()
        yield store


@dataclass
class RunRequest:
    """What a command asks of a run beyond its settings: where it came from and how it may continue."""

    origin: str = "run"
    resume: bool = False
    add_sources: bool = False
    mock_llm: bool | None = None
    notes: list[str] = field(default_factory=list)
    continued: Callable[[Any], Settings] | None = None
    """For `run`: the settings an existing run continues with, from its row (`resume_plan.resume_settings`)."""
    json_out: bool = False
    """`--json`: a run that stops (exit 1, 2, 130, 143) still prints its summary as JSON on stdout."""


def run_factory(settings: Settings, run_id: str, sources: list[str], stages: list[str] | None = None, *,
                quiet: bool = False, read_sources_first: bool = True, request: RunRequest | None = None) -> dict[str, Any]:
    """Run the factory flow in this process; user-caused failures become one line and exit 2, Ctrl-C
    marks the run interrupted and exits 130 with the resume command. Setup is checked from the cheapest
    mistake to the dearest, each failure one line before anything is written: the sources (read whole:
    local, and a user fixing the key should not then learn the file was bad), a configured sandbox
    interpreter (a path looked at, not run), key and endpoint (a
    warning only for a resume, whose remaining calls may all be cached), the store, the run id; then
    the sources' report is printed."""
    from envscaler.console import prefect_cli_environment, quiet_prefect_console

    request = request or RunRequest()
    # every -s file is read, also when the mine stage is not asked for: a file with no task is refused as
    # such (outside check round 4, F4: an EnvScaler env metadata file went through `--stages rollout,export`)
    report = check_sources(sources, settings) if read_sources_first and sources else []
    from sandbox.backend import configured_python_problem

    variable = "ENVSCALER_SANDBOX__PYTHON"  # a mistyped interpreter is a config error: exit 2, nothing written
    origin = variable if settings.sandbox.python and os.environ.get(variable) == settings.sandbox.python else None
    if (problem := configured_python_problem(settings.sandbox, origin)) is not None:
        fail(problem)
    endpoint = check_endpoint(settings, required=not request.resume, quiet=quiet)
    if endpoint.problem is not None:  # a resume on cached answers: fail fast at the first uncached request
        settings = settings.model_copy(update={"llm": settings.llm.model_copy(update={"max_retries": 0})})
    mock = endpoint.mock if request.mock_llm is None else request.mock_llm
    prefect_cli_environment()
    with claimed_store(settings, run_id) as store:
        if not request.resume:
            from envscaler.imported_runs import imported_run_problem

            if (problem := imported_run_problem(store.get_run(run_id), run_id, sources, stages)) is not None:
                fail(problem)
            existing = check_run_id(store, run_id, sources, request.add_sources)
            if existing is not None and request.continued is not None:
                checked = (settings.mine.strict_sources, settings.mine.max_tasks, settings.mine.max_task_chars)
                settings = request.continued(existing)  # the run's own settings, as `resume` builds them
                added = report and request.add_sources and set(sources) - set(existing.sources)
                now = (settings.mine.strict_sources, settings.mine.max_tasks, settings.mine.max_task_chars)
                if added or (report and checked != now):
                    # files added to a run are judged after the ones it read: its tasks are their duplicates
                    from envscaler_core.mine.source_report import reading_order

                    report = check_sources(reading_order(existing.sources_report, sources), settings)
        if request.resume:  # a deployment's run recorded relative paths: found from here too, then absolute
            sources = sources_made_absolute(store, run_id, sources)
        check_sources_unchanged(store, run_id, sources, stages)
        if report:
            say("sources:\n" + "\n".join(report), quiet)
        if (problem := configured_api_problem()) is not None:  # refused before the run's row is written
            fail(problem)
        before = store.get_run(run_id)
        from envscaler.live_progress import LiveProgress
        from envscaler_core.store.urls import human_store

        progress = publish_starting(settings, run_id)
        for note in request.notes:
            say(note, quiet)
        # recorded before the hint that names it: a run killed while Prefect starts (30-60 s on a small
        # machine) is then one `resume` can continue, not "no run" (an outside check hit that twice)
        record_run(store, settings, run_id, sources, stages, request.origin, mock)
        say(f"run {run_id} (store {human_store(store.url)}); Ctrl-C stops it, `{resume_call(run_id, store.url)}` "
            "continues it", quiet)
        flow_started = False
        from envscaler.stop_signals import stop_signals

        with stop_signals() as received:
            try:
                with prefect_api(quiet):
                    from flows.factory import factory_flow

                    quiet_prefect_console()
                    with LiveProgress(progress, quiet=quiet):
                        flow_started = True
                        return _execute(factory_flow, settings, run_id, sources, stages, store,
                                        json_out=request.json_out)
            except KeyboardInterrupt:
                _interrupted(store, run_id, received[0] if received else "SIGINT", json_out=request.json_out)
            except typer.Exit:  # Prefect could not be reached or started: the error line said why
                if not flow_started:
                    _not_started(store, run_id, before)
                raise
        raise AssertionError("unreachable")  # pragma: no cover


def _not_started(store: Any, run_id: str, before: Any) -> None:
    """A run recorded for its resume hint whose flow never began (no Prefect API could be reached or
    started) is taken back: a refusal writes nothing, as for bad sources or config. A new run's row is
    removed, an existing run's row is put back as it was (`status` listed a run that never ran as
    `interrupted`). Never raises: the store's own trouble must not hide the error line."""
    with contextlib.suppress(Exception):
        if before is None:
            store.forget_run(run_id)
        else:
            store.save_run(before)


def _mark_interrupted(store: Any, run_id: str, error: str) -> Any:
    """The run's row, marked interrupted with `error` if it still said running (a finished run is left
    as it is); None when it cannot be read. Never raises: the store may be what was interrupted."""
    run = None
    with contextlib.suppress(Exception):
        run = store.get_run(run_id)
        if run is not None and run.status == "running":
            store.save_run(run.model_copy(update={"status": "interrupted", "error": error,
                                                  "updated_at": datetime.now(UTC)}))
    return run


def check_run_id(store: Any, run_id: str, sources: list[str], add_sources: bool) -> Any:
    """Reusing a run id continues that run (returned; None for a new id): refused (one line) when the
    sources differ, unless the command says to add them (`--add-sources`); an evaluation's id is never a
    factory run's."""
    run = store.get_run(run_id)
    if run is None:
        return None
    if "eval" in run.config:
        fail(f"run {run_id} is a BFCL evaluation, not a factory run; pick another --run-id")
    if add_sources or not sources:
        return run
    before, now = set(run.sources), set(sources)
    if before != now:
        new = sorted(now - before)
        missing = sorted(before - now)
        detail = "; ".join(part for part in (f"new: {', '.join(new)}" if new else "",
                                             f"not given now: {', '.join(missing)}" if missing else "") if part)
        fail(f"run {run_id} already exists with other sources ({detail}); a run id names one run: use a new "
             f"--run-id, `{resume_call(run_id, store.url)}` to continue it, or --add-sources to add these files to it")
    return run


def sources_made_absolute(store: Any, run_id: str, sources: list[str]) -> list[str]:
    """A run that recorded a relative source path (a deployment's default, taken in the worker's
    ENVSCALER_HOME) is looked up in this directory and in ENVSCALER_HOME; once every such file is found,
    the run's record names it by its absolute path (one row write), so this and later resumes work from
    any directory. A file found nowhere is left to the source check, whose error names where it looked."""
    from envscaler_core.pipeline.source_paths import locate, search_dirs, with_sources_at

    run = store.get_run(run_id)
    found, missing = locate(sources, search_dirs())
    if run is None or missing:
        return sources
    fixed = with_sources_at(run, found)
    if fixed is not run:
        store.save_run(fixed)
    return [found[p] for p in sources]


def check_sources_unchanged(store: Any, run_id: str, sources: list[str], stages: list[str] | None) -> None:
    """An existing run that will read its sources again (its mine stage runs) is refused in one line,
    exit 2, when one of them is gone or its contents changed since the run first read it (the sha256
    kept in its sources report): found by the flow's ingest, the same verdict used to mark a completed
    run `failed` although nothing had been stored. Checked before the run's row is touched."""
    from envscaler_core.mine.source_report import changed_sources, file_digest, inspect_sources

    run = store.get_run(run_id)
    if run is None or not sources or (stages and "mine" not in stages):
        return
    from envscaler_core.pipeline.source_paths import locate, missing_message, search_dirs

    dirs = search_dirs()
    gone = locate(sources, dirs)[1]
    if gone:
        fail(f"run {run_id}: {missing_message(gone, dirs, run)}")
    earlier = run.sources_report
    digests = {f.path: f.sha256 for f in earlier.files if f.sha256} if earlier is not None else {}
    differ = [p for p in sources if p in digests and file_digest(p) not in (None, digests[p])]
    if differ:
        lines = changed_sources(earlier, inspect_sources(differ))
        fail(f"run {run_id}: " + "; ".join(lines) + "; a run id names one run over one dataset: start the new "
             "contents under a new --run-id, or put the old file back to continue this run; the run is unchanged")


def record_run(store: Any, settings: Settings, run_id: str, sources: list[str], stages: list[str] | None,
               origin: str, mock: bool) -> None:
    """What the flow does not know: where the run came from (a demo resumes against the bundled mock),
    the stages asked for (union over the commands that ran it), and whether a mock answered."""
    from envscaler_core.models import Run

    run = store.get_run(run_id)
    if run is None:
        store.save_run(Run(run_id=run_id, config=public_config(settings), sources=list(sources), origin=origin,
                           stages=list(stages) if stages else None, mock_llm=mock))
        return
    from envscaler_core.interop.summary import is_import

    if run.stages is None and is_import(run):  # an import ran no factory stage: None would mean all of them
        merged = list(stages) if stages else None
    else:
        merged = None if run.stages is None or not stages else run.stages + [s for s in stages if s not in run.stages]
    store.save_run(run.model_copy(update={"stages": merged, "mock_llm": run.mock_llm or mock}))


def _execute(flow: Any, settings: Settings, run_id: str, sources: list[str], stages: list[str] | None,
             store: Any = None, json_out: bool = False) -> dict[str, Any]:
    from envscaler.console import debug_enabled
    from envscaler.status import print_stopped_summary
    from envscaler_core.llm.errors import LLMConfigError, LLMModelNotServed, LLMRequestRejected, LLMUnavailableError
    from envscaler_core.pipeline.stages import SourceError
    from envscaler_core.store import StoreError

    from envscaler.stop_signals import run_stoppable

    try:
        return run_stoppable(flow(run_id=run_id, sources=sources, config=public_config(settings), stages=stages))
    except SourceError as exc:
        if json_out and store is not None:
            print_stopped_summary(store, run_id)
        fail(f"run {run_id} stopped: {exc}")
    except (LLMConfigError, LLMUnavailableError, LLMRequestRejected, StoreError) as exc:
        kept = _unrecorded(store, settings, run_id, "failed", f"{type(exc).__name__}: {exc}")
        if json_out and store is not None:
            print_stopped_summary(store, run_id)
        if isinstance(exc, LLMModelNotServed):  # a resume keeps the run's models: the error names a new run instead
            fail(f"run {run_id} stopped: {exc}{kept}")
        fail(f"run {run_id} stopped: {exc}{kept} (resume with `{resume_call(run_id, settings.store.url)}`)")
    except Exception as exc:
        if debug_enabled():
            raise
        if store is not None and (finished := _finished_without_prefect(store, run_id, exc)) is not None:
            return finished
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        kept = _unrecorded(store, settings, run_id, "failed", f"{type(exc).__name__}: {first}" if first else type(exc).__name__)
        if json_out and store is not None:
            print_stopped_summary(store, run_id)
        fail(f"run {run_id} failed: {type(exc).__name__}: {first}{kept}"
             f" (see `{cli_call('status', run_id)}`; rerun with --debug for the traceback; resume with "
             f"`{resume_call(run_id, settings.store.url)}`)", code=1)


def _unrecorded(store: Any, settings: Settings, run_id: str, status: str, error: str) -> str:
    """After the flow raised: a run whose row still says running had its end refused by the store (a full
    disk refused the flow's last write and the progress file beside the store alike; `status` then blamed
    a kill). Try the write once more; failing that, keep the end under ENVSCALER_DATA_DIR, where `status`
    and `report` find it. Returns what the error line adds ('' when the store recorded it)."""
    from envscaler.status import ACTIVE, note_unrecorded

    if store is None:
        return ""
    try:
        run = store.get_run(run_id)
    except Exception:  # noqa: BLE001 - a store that cannot even be read: note the end below
        run = None
    else:
        if run is None or run.status not in ACTIVE:
            return ""
        try:
            store.save_run(run.model_copy(update={"status": status, "error": error, "updated_at": datetime.now(UTC)}))
            return ""
        except Exception:  # noqa: BLE001 - the store refuses writes: say where the end went instead
            pass
    kept = note_unrecorded(settings.store.url, run_id, status, error)
    return (f"; the store could not record this end, kept in {kept} for `{cli_call('status', run_id)}`" if kept
            else "; the store could not record this end")


FINISHED = ("completed", "empty", "stopped_budget", "failed")


def _finished_without_prefect(store: Any, run_id: str, exc: BaseException) -> dict[str, Any] | None:
    """The summary of a run whose work finished although the flow failed because the Prefect API stopped
    answering (its server killed or gone) before the flow could report its end; None otherwise. The store
    is the truth: the CLI used to say `failed`, exit 1, for a run whose store said completed and whose
    exports were written (an outside check killed the dashboard's server mid-run)."""
    if not prefect_unreachable(exc):
        return None
    from envscaler_core.pipeline.report import build_summary

    try:
        run = store.get_run(run_id)
    except Exception:  # noqa: BLE001 - the store's own trouble: the caller reports the failure as it is
        return None
    if run is None or run.status not in ("completed", "empty", "stopped_budget"):
        return None
    warn_prefect_gone(run_id, run.status, exc)
    return build_summary(store, run_id).model_dump(mode="json")


def warn_prefect_gone(run_id: str, status: str, exc: BaseException) -> None:
    detail = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    typer.echo(f"warning: the Prefect API stopped answering before run {run_id} could report its end "
               f"({type(exc).__name__}: {detail}); the run itself finished ({status}) and its store and outputs "
               "are complete; the dashboard does not show its end", err=True)


def prefect_unreachable(exc: BaseException) -> bool:
    """A connection to the Prefect API that failed (refused, reset, timed out), anywhere in the chain."""
    import httpx

    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, httpx.TransportError | ConnectionError):
            return True
        exc = exc.__cause__ or exc.__context__  # type: ignore[assignment]
    return False


def _interrupted(store: Any, run_id: str, signal_name: str = "SIGINT", json_out: bool = False) -> None:
    """Exit 130 (143 for SIGTERM) saying what the store holds now: a run the interrupt caught mid-write is
    marked interrupted, with the resume command; a run that had already finished is said to have (a very
    late Ctrl-C used to report a completed run as "stopped")."""
    run = _mark_interrupted(store, run_id, f"interrupted ({'Ctrl-C' if signal_name == 'SIGINT' else signal_name})")
    said = "interrupted" if signal_name == "SIGINT" else f"terminated ({signal_name})"
    if json_out and run is not None:
        from envscaler.status import print_stopped_summary

        print_stopped_summary(store, run_id)
    if run is None:
        typer.echo(f"{said} before run {run_id} started; nothing was recorded", err=True)
    elif run.status == "completed":
        typer.echo(f"{said} after run {run_id} had already completed: nothing was lost; "
                   f"`{cli_call('status', run_id)}` shows its summary", err=True)
    elif run.status in FINISHED:
        typer.echo(f"{said}: run {run_id} had already finished with status {run.status}; "
                   f"`{cli_call('status', run_id)}` shows why", err=True)
    else:
        typer.echo(f"{said}: run {run_id} stopped; finished work is kept. Continue it with:\n"
                   f"  {resume_call(run_id, store.url)}", err=True)
    sys.stdout.flush()
    raise typer.Exit(EXIT_TERMINATED if signal_name == "SIGTERM" else EXIT_INTERRUPTED)


@contextlib.contextmanager
def sigterm_as_interrupt() -> Iterator[list[str]]:
    """SIGTERM (`kill PID`, a CI runner's or systemd's stop) takes Ctrl-C's path: it used to end the run
    at once, exit 143 without a word, the run left `running`. The handler notes the signal and raises
    SIGINT in this process, so asyncio cancels the flow exactly as for Ctrl-C (or, outside the event
    loop, KeyboardInterrupt is raised). Yields the names of the signals received."""
    import signal
    import threading

    received: list[str] = []
    if threading.current_thread() is not threading.main_thread():
        yield received
        return

    def on_term(signum: int, frame: Any) -> None:
        received.append("SIGTERM")
        if not callable(signal.getsignal(signal.SIGINT)):  # SIGINT ignored (a background job) or default
            raise KeyboardInterrupt
        signal.raise_signal(signal.SIGINT)

    from envscaler_core.pipeline import termination

    before = signal.signal(signal.SIGTERM, on_term)
    termination.register(on_term)  # Prefect installs its own around the flow run; the flow puts ours back
    try:
        yield received
    finally:
        termination.register(None)
        signal.signal(signal.SIGTERM, before)
