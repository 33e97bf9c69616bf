"""A loopback proxy in front of a mock LLM that bills every chat request like a provider's prefix cache.

Used by `bench_cost` to price two codebases' prompts with one rule: the baseline's mock knows nothing
of prefix caches, so the proxy, not the mock, counts prompt tokens (~4 characters each) and the tokens
OpenAI's automatic cache would serve (`mock_llm.prefix_cache`: 1,024-token minimum, 128-token blocks,
exact prefix from the first token). Requests and answers pass through unchanged.

The model looks a request up when its answer is produced, so the requests of a fan-out sent at once
hit each other as their answers come back one after the other. A provider looks a prompt up when it
starts processing it (OpenAI routes a request to a server that recently processed the same prefix),
so requests sent together all miss a prefix none of them has been answered for yet. The proxy also
counts that view (`cached_at_send_tokens`: looked up when the request arrives, against the prefixes of
requests answered before), printed beside the official figure as a robustness check, not instead of it. Totals are kept per
prompt id (the `X-EnvScaler-Prompt` header) and served as JSON at `/proxy/stats`.
"""

from __future__ import annotations

import json
import math
import threading
import time
from pathlib import Path
from collections import defaultdict
from typing import Any

import httpx
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from mock_llm.prefix_cache import CHARS_PER_TOKEN, PrefixCache, prompt_text

HOP_HEADERS = {"host", "content-length", "connection", "transfer-encoding", "accept-encoding"}


class CacheProxy:
    """`with CacheProxy(upstream) as proxy:` point clients at `proxy.base_url`; read `proxy.stats()`."""

    def __init__(self, upstream: str, port: int, dump: Path | None = None) -> None:
        self.upstream, self.port = upstream.rstrip("/"), port
        self.dump = dump  # when set: every billed request as one JSON line (tag, tokens, cached, messages)
        self.cache = PrefixCache()
        self.totals: dict[str, dict[str, int]] = defaultdict(
            lambda: {"requests": 0, "prompt_tokens": 0, "cached_tokens": 0, "cached_at_send_tokens": 0})
        self._client: httpx.AsyncClient | None = None
        app = Starlette(routes=[Route("/proxy/stats", self._stats), Route("/{path:path}", self._forward, methods=["GET", "POST"])])
        self._server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning",
                                                     access_log=False, lifespan="off"))
        self._thread = threading.Thread(target=self._server.run, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> CacheProxy:
        self._thread.start()
        deadline = time.monotonic() + 30
        while not self._server.started:
            if time.monotonic() > deadline:
                raise RuntimeError("cache proxy did not start")
            time.sleep(0.05)
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=30)

    def stats(self) -> dict[str, dict[str, int]]:
        return {k: dict(v) for k, v in self.totals.items()}

    async def _stats(self, request: Request) -> JSONResponse:
        return JSONResponse(self.stats())

    async def _forward(self, request: Request) -> Response:
        if self._client is None:
            self._client = httpx.AsyncClient(timeout=600, limits=httpx.Limits(max_connections=256))
        body = await request.body()
        at_send = self._lookup_at_send(body) if request.url.path.endswith("/chat/completions") else 0
        headers = {k: v for k, v in request.headers.items() if k.lower() not in HOP_HEADERS}
        url = f"{self.upstream}{request.url.path}" + (f"?{request.url.query}" if request.url.query else "")
        for attempt in range(3):  # a pooled connection the mock just closed as idle: ask again on a new one
            try:
                reply = await self._client.request(request.method, url, content=body, headers=headers)
                break
            except (httpx.ReadError, httpx.RemoteProtocolError, httpx.ConnectError):
                if attempt == 2:
                    raise
        if request.url.path.endswith("/chat/completions") and reply.status_code == 200:
            self._bill(request.headers.get("x-envscaler-prompt") or "untagged", body, at_send)
        out_headers = {k: v for k, v in reply.headers.items() if k.lower() not in HOP_HEADERS | {"content-encoding"}}
        return Response(reply.content, status_code=reply.status_code, headers=out_headers)

    @staticmethod
    def _text(body: bytes) -> tuple[dict[str, Any], str, int] | None:
        try:
            request = json.loads(body)
        except ValueError:
            return None
        text = prompt_text(str(request.get("model") or "mock"), request.get("messages") or [], request.get("tools"))
        return request, text, max(1, math.ceil(len(text) / CHARS_PER_TOKEN))

    def _lookup_at_send(self, body: bytes) -> int:
        parsed = self._text(body)
        return 0 if parsed is None else self.cache.lookup(self.cache.keys(parsed[1]), parsed[2])

    def _bill(self, tag: str, body: bytes, at_send: int = 0) -> None:
        parsed = self._text(body)
        if parsed is None:
            return
        request, text, tokens = parsed
        cached = self.cache.serve(text, tokens)
        row = self.totals[tag.rpartition("@")[0] or tag]
        row["requests"] += 1
        row["prompt_tokens"] += tokens
        row["cached_tokens"] += cached
        row["cached_at_send_tokens"] += at_send
        if self.dump is not None:
            with self.dump.open("a", encoding="utf-8") as fh:
                fh.write(json.dumps({"tag": tag, "prompt_tokens": tokens, "cached_tokens": cached,
                                     "messages": request.get("messages"), "tools": request.get("tools")}) + "\n")
