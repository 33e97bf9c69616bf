"""Which Prefect API a CLI flow reports to, said out loud.

In order: `PREFECT_API_URL` if set (it must answer); else the local server `envscaler demo` left running
(recorded beside the default store), while it answers; else a temporary API server started for this one
command in its own session (so a terminal's Ctrl-C does not reach it) and stopped after the flow has
reported its final state. Starting one takes 30-60 s on a small machine, so the CLI says so, and says how
to skip it next time."""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator

import typer

from envscaler.commands._common import fail

STARTUP_HINT = "usually 30-60 s"
SKIP_HINT = ("to skip this, keep a server running: `envscaler demo` leaves one that later commands reuse, or run "
             "`prefect server start` and export PREFECT_API_URL=http://127.0.0.1:4200/api")


def api_url_problem(value: str | None) -> str | None:
    """Why PREFECT_API_URL cannot name a Prefect API, or None (unset and empty mean "not configured").
    Checked before any work: Prefect's client took `notaurl` and failed mid-run with "unknown url type"."""
    from urllib.parse import urlsplit

    if not value:
        return None
    example = "e.g. http://127.0.0.1:4200/api, or unset it (a temporary server is then started)"
    try:
        parts = urlsplit(value)
        port_ok = parts.port is None or parts.port > 0
    except ValueError as exc:
        return f"PREFECT_API_URL={value!r} is not a valid URL ({exc}); expected http://HOST:PORT/api, {example}"
    if parts.scheme not in ("http", "https") or not parts.hostname or not port_ok:
        return f"PREFECT_API_URL={value!r} is not an http:// or https:// URL of a Prefect API; {example}"
    return None


def _say(message: str, quiet: bool) -> None:
    from envscaler.terminal_text import visible

    if not quiet:
        typer.echo(visible(message), err=True)


def configured_api_problem() -> str | None:
    """Why the PREFECT_API_URL set cannot be used (it does not answer), or None (unset, or answering). A run
    asks before it writes its row: a refusal for a configured API that does not answer writes nothing."""
    from envscaler.prefect_server import answers

    configured = os.environ.get("PREFECT_API_URL")
    if configured and not answers(configured):
        return (f"PREFECT_API_URL={configured} does not answer; start that server or unset the variable "
                "(a temporary one is then started for the run)")
    return None


@contextlib.contextmanager
def prefect_api(quiet: bool = False) -> Iterator[str]:
    """Yield the API URL in use (also set as PREFECT_API_URL for this process while the block runs)."""
    from envscaler.prefect_server import recorded_server

    configured = os.environ.get("PREFECT_API_URL")
    if configured:
        if (problem := configured_api_problem()) is not None:
            fail(problem)
        _say(f"Prefect: reporting to PREFECT_API_URL={configured}", quiet)
        yield configured
        return
    found = recorded_server()
    if found is not None:
        server, started_by = found
        how = "started" if server.pid is not None else "found running (not started by it)"
        _say(f"Prefect: reporting to the local server {started_by} {how} ({server.ui_url}; flow runs are named "
             "after the run id)", quiet)
        with _using(server.api_url):
            yield server.api_url
        return
    with _temporary_server(quiet) as api_url:
        yield api_url


@contextlib.contextmanager
def _using(api_url: str) -> Iterator[None]:
    from prefect.settings import PREFECT_API_URL, temporary_settings

    os.environ["PREFECT_API_URL"] = api_url
    try:
        with temporary_settings({PREFECT_API_URL: api_url}):
            try:
                yield
            finally:
                drain_prefect()  # logs and events go out while the server still listens, also after Ctrl-C
    finally:
        os.environ.pop("PREFECT_API_URL", None)


@contextlib.contextmanager
def _temporary_server(quiet: bool) -> Iterator[str]:
    from envscaler.prefect_server import start_temporary_server

    _say(f"Prefect: starting a temporary API server for this command ({STARTUP_HINT}; {SKIP_HINT})", quiet)
    started = time.monotonic()
    try:
        server = start_temporary_server()
    except RuntimeError as exc:
        fail(str(exc))
    _say(f"Prefect: ready after {time.monotonic() - started:.0f} s", quiet)
    try:
        with _using(server.api_url):
            yield server.api_url
    finally:
        server.stop(timeout_s=10)


def drain_prefect(timeout_s: float = 10) -> None:
    from prefect.events.worker import EventsWorker
    from prefect.logging.handlers import APILogWorker

    for worker in (APILogWorker, EventsWorker):
        with contextlib.suppress(Exception):
            worker.drain_all(timeout=timeout_s)
