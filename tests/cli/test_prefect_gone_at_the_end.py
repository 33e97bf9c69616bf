"""Spec: a run whose work finished while the Prefect API stopped answering (its server killed before the
flow could report its end) is reported from the store: its status and exit code, with one warning. The
CLI used to say `failed`, exit 1, for a run whose store said completed and whose exports were written
(an outside check killed the dashboard's server mid-run).

The Prefect API is reached through a small forwarding proxy in front of the session server that "dies"
(closes its port and drops the connection) at the flow run's first final state report: deterministic,
and the real client, engine and CLI throughout."""

from __future__ import annotations

import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.cli.helpers import clean_env, envscaler

pytestmark = [pytest.mark.prefect]
FINAL = ("COMPLETED", "FAILED", "CRASHED", "CANCELLED")


class DyingPrefect(ThreadingHTTPServer):
    """Forwards to `upstream`; at the first final state a flow run reports, it stops serving for good."""

    daemon_threads = True

    def __init__(self, upstream: str) -> None:
        self.upstream, self.dead = upstream.rstrip("/"), threading.Event()
        super().__init__(("127.0.0.1", 0), _Forward)

    @property
    def api_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/api"


class _Forward(BaseHTTPRequestHandler):
    server: DyingPrefect

    def log_message(self, *args: Any) -> None:
        pass

    def _forward(self) -> None:
        body = self.rfile.read(int(self.headers.get("content-length") or 0))
        if self.server.dead.is_set() or self._reports_final_flow_state(body):
            self.server.dead.set()
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)  # the client sees a dropped connection, then refused ones
            self.server.socket.close()  # refused from now on, as a killed server's port
            threading.Thread(target=self.server.shutdown, daemon=True).start()
            return
        path = self.path.removeprefix("/api")
        reply = httpx.request(self.command, f"{self.server.upstream}{path}", content=body, timeout=30,
                              headers={k: v for k, v in self.headers.items() if k.lower() in ("content-type", "accept")})
        self.send_response(reply.status_code)
        self.send_header("content-type", reply.headers.get("content-type", "application/json"))
        self.send_header("content-length", str(len(reply.content)))
        self.end_headers()
        self.wfile.write(reply.content)

    def _reports_final_flow_state(self, body: bytes) -> bool:
        if not (self.command == "POST" and self.path.startswith("/api/flow_runs/") and self.path.endswith("/set_state")):
            return False
        try:
            return json.loads(body)["state"]["type"] in FINAL
        except (ValueError, KeyError, TypeError):
            return False

    do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = _forward


def test_a_run_that_finished_is_reported_from_the_store_when_prefect_is_gone(
        prefect_api: str, mock_server: Any, tmp_path: Path) -> None:
    proxy = DyingPrefect(prefect_api)
    threading.Thread(target=proxy.serve_forever, daemon=True).start()
    source = tmp_path / "tasks.jsonl"
    source.write_text('{"task": "What is the capital of France?"}\n{"task": "Tell me a joke about cats."}\n')
    (tmp_path / "home").mkdir()
    env = clean_env(tmp_path / "home", OPENAI_BASE_URL=mock_server.base_url, OPENAI_API_KEY="mock",
                    PREFECT_API_URL=proxy.api_url, PREFECT_CLIENT_MAX_RETRIES="0")
    try:
        out = envscaler("run", "-s", str(source), "--run-id", "gone", "--quiet", env=env, timeout=300)
    finally:
        proxy.server_close()
    assert proxy.dead.is_set(), "the flow never reported a final state through the proxy"
    assert out.returncode == 4, (out.returncode, out.stderr[-3000:])  # as without the outage: finished, empty
    assert "run gone: empty" in out.stdout, out.stdout[-2000:]
    assert "warning: the Prefect API stopped answering before run gone could report its end" in out.stderr
    assert "error: run gone failed" not in out.stderr and "Traceback" not in out.stderr
    status = json.loads(envscaler("status", "gone", "--json", env=env).stdout)
    assert status["status"] == "empty"
