"""What `run`, `resume` and `demo` share: settings from flags, the source check, and running the factory
flow with one-line errors instead of tracebacks for the failures users cause (bad config, bad key, no
endpoint, a locked or uncreatable database), a live progress display, and a Ctrl-C that stops.

Ctrl-C: the terminal sends SIGINT to the whole foreground process group. The Prefect server we start
lives in its own session, so only this process gets it; asyncio cancels the flow, the stages abandon
their in-flight items (finished ones are already stored), the run is marked `interrupted`, the flow
reports its final state to the still-running server, and only then is the server stopped. A second
Ctrl-C skips the waiting."""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import typer

from envscaler.commands._common import fail
from envscaler_core.config import ConfigError, Settings, envscaler_data_dir, load_settings, public_config

EXIT_INTERRUPTED = 130


def new_run_id(prefix: str = "run") -> str:
    return f"{prefix}-{datetime.now(UTC):%Y%m%d-%H%M%S}-{secrets.token_hex(2)}"


def settings_from(config: Path | None, db: str | None = None, overrides: dict[str, Any] | None = None) -> Settings:
    extra = dict(overrides or {})
    if db:
        extra["store"] = {"url": db}
    try:
        return load_settings(config, overrides=extra)
    except ConfigError as exc:
        fail(str(exc))


def say(message: str, quiet: bool = False) -> None:
    """Progress-type information goes to stderr, so stdout stays the summary (or its JSON)."""
    if not quiet:
        typer.echo(message, err=True)


def source_paths(sources: list[Path]) -> list[str]:
    """Absolute paths of the source files, or exit 2 naming the missing ones (checked first: it is the
    cheapest mistake to report)."""
    missing = [str(p) for p in sources if not Path(p).is_file()]
    if missing:
        fail(f"source file(s) not found: {', '.join(missing)}")
    return [str(Path(p).resolve()) for p in sources]


def check_sources(sources: list[str], settings: Settings) -> list[str]:
    """Read every source file before anything is written (the store is not even created): exit 2 on a file
    that yields no task, an unreadable format, or (strict) a malformed record; else the report's lines."""
    from envscaler_core.mine.source_report import inspect_sources, report_lines, source_errors

    report = inspect_sources(sources, settings.mine.max_tasks)
    errors = source_errors(report, strict=settings.mine.strict_sources)
    if errors:
        more = f" (and {len(errors) - 1} more problem(s))" if len(errors) > 1 else ""
        fail(errors[0] + more)
    return report_lines(report)


def check_endpoint(settings: Settings) -> None:
    """No API key, an endpoint nothing listens on, or a key the endpoint refuses: one line, before any flow."""
    import socket
    from urllib.parse import urlsplit

    import httpx

    from envscaler_core.llm import LLMGateway
    from envscaler_core.llm.errors import LLMConfigError

    gateway = LLMGateway(settings.llm)
    try:
        key = gateway.api_key()
    except LLMConfigError as exc:
        fail(str(exc))
    base = settings.llm.base_url or "https://api.openai.com/v1"
    url = urlsplit(base)
    port = url.port or (443 if url.scheme == "https" else 80)
    try:
        socket.create_connection((url.hostname or "", port), timeout=5).close()
    except OSError as exc:
        fail(f"LLM endpoint {url.scheme}://{url.hostname}:{port} is unreachable ({exc.strerror or exc}); "
             "check OPENAI_BASE_URL, or start `envscaler mock-llm` for a dry run")
    try:  # listing models is free; a refused key answers 401/403 here on OpenAI-compatible servers
        answer = httpx.get(base.rstrip("/") + "/models", headers={"Authorization": f"Bearer {key}"}, timeout=10)
    except httpx.HTTPError:
        return  # reachable but slow or odd: the run's own retries and errors take over
    if answer.status_code in (401, 403):
        fail(f"the LLM endpoint {base} rejected the API key (HTTP {answer.status_code}); check OPENAI_API_KEY "
             "(or llm.api_key)")


@contextlib.contextmanager
def claimed_store(settings: Settings) -> Iterator[Any]:
    """Open the store for the whole run in this process: a DuckDB file another run holds fails here, in one
    line and before anything is recorded, instead of inside the flow."""
    from envscaler_core.store import Store, StoreError

    try:
        store = Store.from_url(settings.store.url)
    except StoreError as exc:
        fail(str(exc))
    try:
        yield store
    finally:
        store.close()


@contextlib.contextmanager
def prefect_api() -> Iterator[None]:
    """Use PREFECT_API_URL if set (it must answer); else a temporary server of our own, in its own session."""
    import os

    from envscaler.prefect_server import healthy, start_temporary_server

    configured = os.environ.get("PREFECT_API_URL")
    if configured:
        if not healthy(configured, timeout=5):
            fail(f"PREFECT_API_URL={configured} does not answer; start that server or unset the variable "
                 "(a temporary one is then started for the run)")
        yield
        return
    try:
        server = start_temporary_server()
    except RuntimeError as exc:
        fail(str(exc))
    os.environ["PREFECT_API_URL"] = server.api_url
    from prefect.settings import PREFECT_API_URL, temporary_settings

    try:
        with temporary_settings({PREFECT_API_URL: server.api_url}):
            try:
                yield
            finally:
                drain_prefect()  # logs and events go out while the server still listens, also after Ctrl-C
    finally:
        os.environ.pop("PREFECT_API_URL", None)
        server.stop(timeout_s=10)


def drain_prefect(timeout_s: float = 10) -> None:
    from prefect.events.worker import EventsWorker
    from prefect.logging.handlers import APILogWorker

    for worker in (APILogWorker, EventsWorker):
        with contextlib.suppress(Exception):
            worker.drain_all(timeout=timeout_s)


@contextlib.contextmanager
def flow_session(settings: Settings) -> Iterator[Any]:
    """What every verb that runs a flow needs around it: Prefect without telemetry and with a one-line
    console, the store claimed in this process (a DuckDB file another run holds fails here, before
    anything is recorded), and a Prefect API (the configured one, or a temporary server in its own session)."""
    from envscaler.console import prefect_cli_environment, quiet_prefect_console

    prefect_cli_environment()
    with claimed_store(settings) as store, prefect_api():
        quiet_prefect_console()
        yield store


def run_factory(settings: Settings, run_id: str, sources: list[str], stages: list[str] | None = None, *,
                quiet: bool = False, read_sources_first: bool = True) -> dict[str, Any]:
    """Run the factory flow in this process; user-caused failures become one line and exit 2, Ctrl-C
    marks the run interrupted and exits 130 with the resume command. Setup is checked in the order a
    user fixes it, each failure one line before anything is written: key and endpoint, the sources
    (read whole), the store; then the sources' report is printed."""
    from envscaler.console import prefect_cli_environment, quiet_prefect_console

    check_endpoint(settings)
    report = check_sources(sources, settings) if read_sources_first and sources and "mine" in (stages or ["mine"]) \
        else []
    prefect_cli_environment()
    with claimed_store(settings) as store:
        if report:
            say("sources:\n" + "\n".join(report), quiet)
        from envscaler.live_progress import LiveProgress
        from envscaler_core.pipeline.progress import progress_path

        progress = progress_path(settings.store.url, run_id, envscaler_data_dir())
        progress.unlink(missing_ok=True)
        say(f"run {run_id} (store {store.url}); Ctrl-C stops it, `envscaler resume {run_id}` continues it", quiet)
        try:
            with prefect_api():
                from flows.factory import factory_flow

                quiet_prefect_console()
                with LiveProgress(progress, quiet=quiet):
                    return _execute(factory_flow, settings, run_id, sources, stages)
        except KeyboardInterrupt:
            _interrupted(store, run_id)
        raise AssertionError("unreachable")  # pragma: no cover


def _execute(flow: Any, settings: Settings, run_id: str, sources: list[str], stages: list[str] | None) -> dict[str, Any]:
    from envscaler.console import debug_enabled
    from envscaler_core.llm.errors import LLMConfigError, LLMRequestRejected, LLMUnavailableError
    from envscaler_core.pipeline.stages import SourceError
    from envscaler_core.store import StoreError

    try:
        return asyncio.run(flow(run_id=run_id, sources=sources, config=public_config(settings), stages=stages))
    except SourceError as exc:
        fail(f"run {run_id} stopped: {exc}")
    except (LLMConfigError, LLMUnavailableError, LLMRequestRejected, StoreError) as exc:
        fail(f"run {run_id} stopped: {exc} (resume with `envscaler resume {run_id}`)")
    except Exception as exc:
        if debug_enabled():
            raise
        fail(f"run {run_id} failed: {type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''}"
             f" (see `envscaler status {run_id}`; rerun with --debug for the traceback; resume with "
             f"`envscaler resume {run_id}`)", code=1)


def _interrupted(store: Any, run_id: str) -> None:
    """Exit 130 with the resume command; a run the interrupt caught mid-write is marked here."""
    run = None
    with contextlib.suppress(Exception):
        run = store.get_run(run_id)
        if run is not None and run.status == "running":
            store.save_run(run.model_copy(update={"status": "interrupted", "error": "interrupted (Ctrl-C)",
                                                  "updated_at": datetime.now(UTC)}))
    if run is None:
        typer.echo(f"interrupted before run {run_id} started; nothing was recorded", err=True)
    else:
        typer.echo(f"interrupted: run {run_id} stopped; finished work is kept. Continue it with:\n"
                   f"  envscaler resume {run_id}", err=True)
    sys.stdout.flush()
    raise typer.Exit(EXIT_INTERRUPTED)
