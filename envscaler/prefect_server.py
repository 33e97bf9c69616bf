"""A local Prefect server for the demo, the benchmarks and the test session: reuse one that answers,
or start `prefect server start` detached and wait for it."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path


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
    env.update(PREFECT_HOME=str(home), PREFECT_SERVER_ANALYTICS_ENABLED="false", PREFECT_UI_ENABLED="true",
               PREFECT_UI_API_URL=api_url)
    prefect = Path(sys.executable).with_name("prefect")
    proc = subprocess.Popen([str(prefect), "server", "start", "--host", "127.0.0.1", "--port", str(port)],
                            stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the Prefect server exited with {proc.returncode}; see {home / 'server.log'}")
        if healthy(api_url):
            return PrefectServer(api_url, proc.pid, proc)
        time.sleep(0.3)
    proc.kill()
    raise RuntimeError(f"the Prefect server did not answer within {wait_s:.0f}s; see {home / 'server.log'}")
