"""Spec: a configured PREFECT_API_URL is refused only when no server is there. A server that is there but busy
(its SQLite database under a burst of flow runs) can take longer than one 5 s health probe to answer; CI saw a
run refused as "does not answer" by a session server that answered the next test. A probe that times out is
tried again for up to 30 s; a refused connection is the answer at once. Real HTTP servers on loopback."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from envscaler.prefect_server import answers, free_port


def _slow_health(delays: list[float]) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            time.sleep(delays.pop(0) if delays else 0)
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.end_headers()
            self.wfile.write(b"true")

        def log_message(self, *args: object) -> None:
            pass

    return Handler


@pytest.fixture
def busy_api() -> Iterator[str]:
    """Its first /health answer takes 1.5 s, longer than the 0.5 s probes the spec uses."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _slow_health([1.5]))
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/api"
    finally:
        server.shutdown()
        server.server_close()


def test_a_busy_server_that_misses_one_probe_is_used(busy_api: str) -> None:
    assert answers(busy_api, patience_s=10, probe_s=0.5)


def test_a_busy_server_is_refused_once_the_patience_is_spent(busy_api: str) -> None:
    assert not answers(busy_api, patience_s=0.6, probe_s=0.5)


def test_no_server_at_all_is_refused_without_waiting_for_the_patience() -> None:
    started = time.monotonic()
    assert not answers(f"http://127.0.0.1:{free_port()}/api", patience_s=60, probe_s=5)
    assert time.monotonic() - started < 30  # a functional bound (it did not wait out the 60 s), not a speed claim
