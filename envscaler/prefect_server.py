"""A local Prefect server for the demo, the benchmarks and the test session: reuse one that answers,
or start `prefect server start` detached and wait for it; and the temporary API server `envscaler run`
starts when no PREFECT_API_URL is set.

Every server we start runs in its own session (process group): a terminal's Ctrl-C goes to the
foreground process group, and a server that received it too would die while the flow still has to
report its final state to it (the flow then retried against a dead port for minutes)."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from collections.abc import Iterator
from pathlib import Path
from typing import Any


@dataclass
class PrefectServer:
    api_url: str
    pid: int | None  # None: someone else's server, left alone
    proc: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    @property
    def ui_url(self) -> str:
        return self.api_url.removesuffix("/api")

    def stop(self, timeout_s: float = 20.0) -> None:
        """Stop the server if we started it (a reused one is left running)."""
        if self.proc is None:
            return
        self.proc.terminate()
        try:
            self.proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            self.proc.kill()


QUIET_SERVER_ENV = {"PREFECT_SERVER_ANALYTICS_ENABLED": "false", "PREFECT_SERVER_LOGGING_LEVEL": "ERROR"}
"""No telemetry calls home (they failed offline with an ERROR line per run), no access log."""


def start_temporary_server(wait_s: float = 180.0) -> PrefectServer:
    """Prefect's API (no UI) on a free loopback port, in its own session, stopped by the caller with
    `.stop()` once the flow has reported its final state, or by itself when the caller is killed
    (`orphan_guard`). The database is the configured PREFECT_HOME's."""
    from prefect.settings import get_current_settings

    port = free_port()
    api_url = f"http://127.0.0.1:{port}/api"
    try:
        settings = get_current_settings().to_environment_variables(exclude_unset=True)
    except Exception as exc:  # pydantic wraps a Ctrl-C that lands in its serializer: it is still a Ctrl-C
        if "KeyboardInterrupt" in str(exc):
            raise KeyboardInterrupt from None
        raise
    env = {**os.environ, **settings, **QUIET_SERVER_ENV,
           "PREFECT_UI_ENABLED": "0", "PREFECT__SERVER_EPHEMERAL": "1", "PREFECT__SERVER_FINAL": "1"}
    env.pop("PREFECT_API_URL", None)
    import prefect

    log = tempfile.TemporaryFile()  # noqa: SIM115 (the server's stderr; a pipe nobody drains would block it)
    proc = subprocess.Popen(
        [sys.executable, "-m", "envscaler.orphan_guard", str(os.getpid()), "uvicorn", "--app-dir", str(Path(prefect.__file__).parent.parent), "--factory",
         "prefect.server.api.server:create_app", "--host", "127.0.0.1", "--port", str(port), "--log-level", "error",
         "--lifespan", "on"],
        env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log, start_new_session=True)
    try:
        return _await_temporary(proc, api_url, log, wait_s)
    except BaseException:  # Ctrl-C while it starts: it is in its own session, so nobody else would stop it
        proc.kill()
        proc.wait()
        raise


def _await_temporary(proc: subprocess.Popen[bytes], api_url: str, log: Any, wait_s: float) -> PrefectServer:
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            log.seek(0)
            err = log.read().decode(errors="replace").strip().splitlines()
            raise RuntimeError(f"the temporary Prefect server exited with {proc.returncode}"
                               + (f": {err[-1]}" if err else ""))
        if healthy(api_url, timeout=0.5):
            return PrefectServer(api_url, proc.pid, proc)
        time.sleep(0.2)
    raise RuntimeError(f"the temporary Prefect server did not answer within {wait_s:.0f}s; set PREFECT_API_URL "
                       "to a running server (`prefect server start`)")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def healthy(api_url: str, timeout: float = 1.0) -> bool:
    try:
        with urllib.request.urlopen(f"{api_url}/health", timeout=timeout) as resp:  # noqa: S310 (loopback)
            return resp.status == 200
    except OSError:
        return False


def answers(api_url: str, patience_s: float = 30.0, probe_s: float = 5.0) -> bool:
    """Whether a server someone configured answers, judged patiently: a server that is there but busy (a burst of
    flow runs on its SQLite database) can miss one probe's timeout, and refusing it then stops a run for nothing,
    while a server that is not there refuses the connection at once. So a probe that times out is tried again
    until `patience_s`; a refused connection or any other error is the answer."""
    deadline = time.monotonic() + patience_s
    while True:
        try:
            with urllib.request.urlopen(f"{api_url}/health", timeout=probe_s) as resp:  # noqa: S310 (loopback)
                return resp.status == 200
        except OSError as exc:
            reason = exc.reason if isinstance(exc, urllib.error.URLError) else exc
            if not isinstance(reason, TimeoutError) or time.monotonic() + probe_s > deadline:
                return False


def ensure_prefect_server(home: Path, port: int = 4200, wait_s: float = 180.0, *, reuse: bool = True) -> PrefectServer:
    """Reuse a healthy server at PREFECT_API_URL or 127.0.0.1:port (unless `reuse=False`); otherwise
    start one detached (SQLite under `home`) and wait until it answers."""
    configured = os.environ.get("PREFECT_API_URL") if reuse else None
    api_url = configured or f"http://127.0.0.1:{port}/api"
    if reuse and healthy(api_url):
        return PrefectServer(api_url, None)
    if configured:
        raise RuntimeError(f"PREFECT_API_URL={configured} does not answer; unset it to let the demo start a server")
    home.mkdir(parents=True, exist_ok=True)
    log = open(home / "server.log", "ab")  # noqa: SIM115 (owned by the detached server)
    env = {k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"}
    # PREFECT_UI_API_URL: else the dashboard calls the default port 4200, whatever port we chose
    env.update(QUIET_SERVER_ENV, PREFECT_HOME=str(home), PREFECT_UI_ENABLED="true", PREFECT_UI_API_URL=api_url)
    prefect = Path(sys.executable).with_name("prefect")
    with _ctrl_c_noted() as ctrl_c:  # a Ctrl-C inside Popen would leave the detached server unknown to us
        proc = subprocess.Popen([str(prefect), "server", "start", "--host", "127.0.0.1", "--port", str(port)],
                                stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
        deadline = time.monotonic() + wait_s
        try:
            while time.monotonic() < deadline:
                if ctrl_c:
                    raise KeyboardInterrupt
                if proc.poll() is not None:
                    raise RuntimeError(f"the Prefect server exited with {proc.returncode}; see {home / 'server.log'}")
                if healthy(api_url) and not ctrl_c:  # a Ctrl-C during that check still stops it
                    return PrefectServer(api_url, proc.pid, proc)
                time.sleep(0.3)
        except BaseException as exc:
            # Ctrl-C (or any failure) while it starts: it runs in its own session, out of reach of the terminal's
            # Ctrl-C, so nobody else would ever stop it, and it would hold the port with no record of it
            stop_group(proc)
            if isinstance(exc, KeyboardInterrupt):
                raise StartInterrupted(proc.pid) from None
            raise
    stop_group(proc)
    raise RuntimeError(f"the Prefect server did not answer within {wait_s:.0f}s; see {home / 'server.log'}")


@contextlib.contextmanager
def _ctrl_c_noted() -> Iterator[list[int]]:
    """While the server starts, Ctrl-C is noted (the list gets an item) instead of raised wherever it lands:
    raised inside `subprocess.Popen`, after the server was forked, it left a server nobody would stop (a
    flaky spec showed it). Only the main thread can set a handler; elsewhere Ctrl-C is not ours anyway."""
    noted: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield noted
        return
    previous = signal.signal(signal.SIGINT, lambda signum, frame: noted.append(signum))
    try:
        yield noted
    finally:
        signal.signal(signal.SIGINT, previous)


class StartInterrupted(KeyboardInterrupt):
    """Ctrl-C while `ensure_prefect_server` waited for the server it started; that server was stopped."""

    def __init__(self, pid: int) -> None:
        super().__init__(pid)
        self.pid = pid


def stop_group(proc: subprocess.Popen[bytes], grace_s: float = 10.0) -> None:
    """SIGTERM the process group `proc` leads (a server started with start_new_session, with any worker
    process it forked), SIGKILL after `grace_s`."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            break
        try:
            proc.wait(timeout=grace_s)
            if sig == signal.SIGTERM:
                os.killpg(proc.pid, signal.SIGKILL)  # stragglers left in the group, if any
            break
        except subprocess.TimeoutExpired:
            continue
        except (ProcessLookupError, PermissionError):
            break


# -- the local server later commands reuse --------------------------------------------------------------
# `envscaler demo` leaves a Prefect server running (the dashboard outlives the demo). It is recorded beside
# the default store, so `run`, `resume` and `eval`, from any directory, report to it instead of starting a
# temporary server of their own (30-60 s each on a small machine) while it still answers.

RECORD_NAME = "prefect-server.json"


def record_path() -> Path:
    from envscaler_core.config import envscaler_data_dir

    return envscaler_data_dir() / RECORD_NAME


def record_server(server: PrefectServer, started_by: str) -> None:
    """Remember `server` for later commands (best effort: a read-only data dir only loses the reuse)."""
    import json

    path = record_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"api_url": server.api_url, "pid": server.pid, "started_by": started_by,
                                    "recorded_at": time.time()}) + "\n", encoding="utf-8")
    except OSError:
        pass


def recorded_server(timeout: float = 2.0) -> tuple[PrefectServer, str] | None:
    """The recorded server and who started it, if it still answers; a record of a dead server is removed."""
    import json

    path = record_path()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        api_url, pid = str(data["api_url"]), data.get("pid")
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if pid is not None and not pid_alive(int(pid)):
        path.unlink(missing_ok=True)
        return None
    if not healthy(api_url, timeout=timeout):
        if pid is None:
            path.unlink(missing_ok=True)
        return None
    return PrefectServer(api_url, None if pid is None else int(pid)), str(data.get("started_by") or "an earlier command")


def pid_alive(pid: int | None) -> bool:
    """True while a process with that pid exists (one of another user counts)."""
    if not pid:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
