"""Spec: the pre-flight probe (`envscaler/endpoint.py`) stops a run only on a verdict about the chat endpoint,
quoting the server's words: a 401/403 on `/models` is a rejected key unless the server says the key may not list
models (OpenAI's restricted keys: "Missing scopes: api.model.read"; such a key may still chat), and a 200 web
page at `/models` (a web UI's catch-all in front of a working chat route) is no verdict. Real HTTP server, the
real probe. Before, both stopped the run ("rejected the API key", "answers .../models with a web page"; an
outside check), and the key's refusal was not quoted."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator

import pytest

from envscaler.endpoint import probe_endpoint
from envscaler_core.config import Settings


class Models(http.server.BaseHTTPRequestHandler):
    """Answers every GET with the server's `answer`: (status, content type, body)."""

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        self.send_response(self.server.answer[0])  # type: ignore[attr-defined]
        self.send_header("Content-Type", self.server.answer[1])  # type: ignore[attr-defined]
        self.send_header("Content-Length", str(len(self.server.answer[2])))  # type: ignore[attr-defined]
        self.end_headers()
        self.wfile.write(self.server.answer[2])  # type: ignore[attr-defined]

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def server() -> Iterator[http.server.ThreadingHTTPServer]:
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Models)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield srv
    srv.shutdown()
    srv.server_close()


def _probe(srv: http.server.ThreadingHTTPServer, status: int, kind: str, body: bytes) -> str | None:
    srv.answer = (status, kind, body)  # type: ignore[attr-defined]
    settings = Settings.model_validate({"llm": {"base_url": f"http://127.0.0.1:{srv.server_address[1]}/v1",
                                                "api_key": "sk-restricted"}})
    return probe_endpoint(settings).problem


RESTRICTED = (b'{"error": {"message": "You have insufficient permissions for this operation. Missing scopes: '
              b'api.model.read. Check that you have the correct role in your organization (Reader, Writer, Owner) and '
              b'project (Member, Owner), and if you\'re using a restricted API key, that it has the necessary scopes.", '
              b'"type": "invalid_request_error", "param": null, "code": null}}')


def test_a_key_that_may_not_list_models_is_no_rejected_key(server) -> None:
    assert _probe(server, 401, "application/json", RESTRICTED) is None
    assert _probe(server, 403, "application/json", RESTRICTED) is None


def test_a_rejected_key_is_quoted(server) -> None:
    said = _probe(server, 401, "application/json", b'{"error": {"message": "Incorrect API key provided: sk-restr***ted.", '
                                                     b'"type": "invalid_request_error", "code": "invalid_api_key"}}')
    assert said is not None and "rejected the API key (HTTP 401" in said and "Incorrect API key provided" in said


def test_a_web_page_at_models_is_no_verdict(server) -> None:
    assert _probe(server, 200, "text/html; charset=utf-8", b"<!DOCTYPE html><html><body>Open WebUI</body></html>") is None
