"""An OpenAI-compatible endpoint that answers with scripted raw responses, verbatim.

The mock's realism covers the forms we chose; outside endpoints send others (a `refusal`, a
`content_filter` stop, content as a list of parts, usage missing, ...). This server replays whatever
raw JSON a spec gives it, one response per request (the last one repeats), and keeps every request
body it received, so a spec can read the repair turn or the output limit the gateway sent.
"""

from __future__ import annotations

import asyncio
import copy
import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from mock_llm.server import listening_socket, uvicorn_config


STATUS = "__http_status__"
"""A scripted response with this key is sent with that HTTP status (the key itself is not sent)."""
RAW = "__raw_body__"
"""A scripted response with this key sends its value (a str) verbatim as the JSON body."""
MEDIA = "__media_type__"
"""With RAW: the Content-Type to send it with (`text/html`, `text/event-stream`); JSON by default."""
HEADERS = "__headers__"
"""A scripted response with this key is sent with these extra response headers (the key itself is not sent)."""
TRICKLE = "__trickle__"
"""`(interval_s, count)`: send the headers, then one blank line every `interval_s`, `count` times, then the
rest of the response as its body (servers that keep a queued request's connection alive this way)."""


def completion(content: Any = None, *, finish: str | None = "stop", usage: dict[str, int] | None | bool = True,
               **message_fields: Any) -> dict[str, Any]:
    """A raw chat.completion body; `usage=False` leaves the key out, `None` sends null."""
    message = {"role": "assistant", "content": content, **message_fields}
    body: dict[str, Any] = {"id": "chatcmpl-x", "object": "chat.completion", "created": 0, "model": "m",
                            "choices": [{"index": 0, "message": message, "finish_reason": finish}]}
    if usage is True:
        body["usage"] = {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}
    elif usage is not False:
        body["usage"] = usage
    return body


class ScriptedEndpoint:
    def __init__(self) -> None:
        self.responses: list[dict[str, Any]] = []
        self.requests: list[dict[str, Any]] = []
        self.models: list[str] | None = None  # what GET /v1/models lists; None: the route answers 404
        self.model_listings = 0  # GET /v1/models asked
        self._lock = threading.Lock()
        sock = listening_socket("127.0.0.1", 0)
        self.port = sock.getsockname()[1]
        app = Starlette(routes=[Route("/v1/chat/completions", self._chat, methods=["POST"]),
                                   Route("/v1/embeddings", self._chat, methods=["POST"]),
                                   Route("/v1/models", self._models, methods=["GET"])])
        self._server = uvicorn.Server(uvicorn_config(app, "127.0.0.1", self.port))
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [sock]}, daemon=True)
        self._sock = sock

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def script(self, *responses: dict[str, Any]) -> "ScriptedEndpoint":
        with self._lock:
            self.responses, self.requests = [copy.deepcopy(r) for r in responses], []
            self.models, self.model_listings = None, 0
        return self

    def serve_models(self, *names: str) -> "ScriptedEndpoint":
        """GET /v1/models lists these names (in vLLM's shape), until the next `script`."""
        self.models = list(names)
        return self

    async def _models(self, request: Request) -> JSONResponse:
        with self._lock:
            self.model_listings += 1
            names = self.models
        if names is None:
            return JSONResponse({"detail": "Not Found"}, status_code=404)
        return JSONResponse({"object": "list", "data": [{"id": n, "object": "model", "created": 0, "owned_by": "vllm"}
                                                        for n in names]})

    async def _chat(self, request: Request) -> JSONResponse:
        body = await request.json()
        with self._lock:
            self.requests.append(body)
            response = self.responses.pop(0) if len(self.responses) > 1 else self.responses[0]
        status = response.get(STATUS, 200)
        headers = response.get(HEADERS)
        if TRICKLE in response:
            interval, count = response[TRICKLE]
            rest = json.dumps({k: v for k, v in response.items() if k not in (STATUS, TRICKLE)}).encode()

            async def trickle() -> Any:
                for _ in range(count):
                    yield b"\n"
                    await asyncio.sleep(interval)
                yield rest

            return StreamingResponse(trickle(), status_code=status, media_type="application/json")
        if RAW in response:
            return Response(response[RAW], status_code=status, media_type=response.get(MEDIA, "application/json"))
        return JSONResponse({k: v for k, v in response.items() if k not in (STATUS, HEADERS)}, status_code=status,
                            headers=headers)

    def start(self) -> "ScriptedEndpoint":
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started and time.monotonic() < deadline:
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=10)
        self._sock.close()


@pytest.fixture(scope="session")
def scripted_endpoint_server() -> Iterator[ScriptedEndpoint]:
    server = ScriptedEndpoint().start()
    yield server
    server.stop()


@pytest.fixture
def endpoint(scripted_endpoint_server: ScriptedEndpoint) -> ScriptedEndpoint:
    return scripted_endpoint_server.script(completion("{}"))
