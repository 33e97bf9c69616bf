"""`envscaler demo`: the whole factory on bundled real tasks, against the built-in MOCK LLM.

Everything is local and labelled: the mock LLM server on loopback (a deterministic script that
exercises the machinery, not a model), a DuckDB file under `var/demo/`, and a local Prefect server
(started in the background if none answers, so the dashboard outlives the demo).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SLICE = Path(__file__).resolve().parent.parent / "envscaler_core" / "data" / "api_bank_lv3_slice.json"

DEMO_OVERRIDES: dict[str, Any] = {
    "mine": {"max_tasks": 80, "select_n": 8},
    "validate": {"mode": "both", "rounds": 12},
    "scen": {"per_env": 2},
    "rollout": {"per_scenario": 1},
    "flow": {"batch_size": 10},
}


@dataclass
class PrefectServer:
    api_url: str
    pid: int | None  # None: someone else's server, left alone

    @property
    def ui_url(self) -> str:
        return self.api_url.removesuffix("/api")


def _healthy(api_url: str, timeout: float = 1.0) -> bool:
    try:
        with urllib.request.urlopen(f"{api_url}/health", timeout=timeout) as resp:  # noqa: S310 (loopback)
            return resp.status == 200
    except OSError:
        return False


def ensure_prefect_server(home: Path, port: int = 4200, wait_s: float = 180.0) -> PrefectServer:
    """Reuse a healthy server at PREFECT_API_URL or 127.0.0.1:port; otherwise start one detached
    (`prefect server start`, SQLite under `home`) and wait until it answers."""
    configured = os.environ.get("PREFECT_API_URL")
    api_url = configured or f"http://127.0.0.1:{port}/api"
    if _healthy(api_url):
        return PrefectServer(api_url, None)
    if configured:
        raise RuntimeError(f"PREFECT_API_URL={configured} does not answer; unset it to let the demo start a server")
    home.mkdir(parents=True, exist_ok=True)
    log = open(home / "server.log", "ab")  # noqa: SIM115 (owned by the detached server)
    env = dict(os.environ, PREFECT_HOME=str(home), PREFECT_SERVER_ANALYTICS_ENABLED="false",
               PREFECT_UI_ENABLED="true", PREFECT_UI_API_URL=api_url)  # else the UI calls :4200 whatever the port
    prefect = Path(sys.executable).with_name("prefect")
    proc = subprocess.Popen([str(prefect), "server", "start", "--host", "127.0.0.1", "--port", str(port)],
                            stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the Prefect server exited with {proc.returncode}; see {home / 'server.log'}")
        if _healthy(api_url):
            return PrefectServer(api_url, proc.pid)
        time.sleep(0.5)
    proc.terminate()
    raise RuntimeError(f"the Prefect server did not answer within {wait_s:.0f}s; see {home / 'server.log'}")
