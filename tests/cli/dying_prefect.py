"""A Prefect API that dies on cue: a forwarding proxy in front of the session server that closes its port
and drops the connection at the first final state a flow run reports (a killed dashboard server, at a
deterministic moment). The real client, engine and CLI talk to it as to any server."""

from __future__ import annotations

import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx

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
