"""The mock LLM's HTTP layer: an OpenAI-compatible subset on loopback, with fault injection.

`POST /v1/chat/completions` parses the request into a `MockRequest` and asks a handler (by default the
brain, imported lazily) for a `MockReply`; `POST /v1/embeddings` asks an embedder; `GET /v1/models`
lists the models. Test/ops endpoints: `GET /mock/stats`, `POST /mock/reset`, `POST /mock/faults`.
Every response says it is a mock (`X-EnvScaler-Mock: 1`, `system_fingerprint: "envscaler-mock"`,
`owned_by: "envscaler-mock"`).

Starlette on uvicorn, fully async: injected latency is an `asyncio.sleep`, so 64 concurrent requests
with 200 ms latency take ~200 ms, not 64 x 200 ms. Handlers run in a worker thread so a slow one does
not stall the loop.
"""

from __future__ import annotations

import asyncio
import base64
import itertools
import json
import math
import socket
import threading
import time
from array import array
from typing import Any, Awaitable, Callable

import anyio.to_thread
import httpx
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from envscaler_core.config import StageModels
from envscaler_core.prompts import STRUCTURED_PROMPTS
from envscaler_core.prompts.base import PROMPT_HEADER, extract_input, parse_tag
from mock_llm import forms
from mock_llm.http_state import FaultConfig, MockState
from mock_llm.prefix_cache import PrefixCache, prompt_text
from mock_llm.protocol import Handler, MockCannotAnswer, MockReply, MockRequest
from mock_llm.realism import TRUNCATE_AT, Plan, RealismConfig, needed_room, plan_for, request_key, truncate

Embedder = Callable[[str], list[float]]
Serve = Callable[[dict[str, Any], "str | None", bool], Awaitable[JSONResponse]]
MOCK_HEADERS = {"X-EnvScaler-Mock": "1"}
FINGERPRINT = "envscaler-mock"
DEFAULT_REJECT_KEY = "bad-key"


def estimate_tokens(chars: int) -> int:
    """~4 characters per token, at least 1: enough for cost arithmetic to be exercised."""
    return max(1, math.ceil(chars / 4))


def _error(status: int, message: str, kind: str, headers: dict[str, str] | None = None) -> JSONResponse:
    body = {"error": {"message": message, "type": kind, "code": None, "param": None}}
    return JSONResponse(body, status_code=status, headers={**MOCK_HEADERS, **(headers or {})})


class _Brain:
    """Resolves the handler and embedder; the real brain is imported on first use so the server (and
    its fault tests) work while the brain is absent or broken."""

    def __init__(self, handler: Handler | None, embedder: Embedder | None) -> None:
        self.handler, self.embedder = handler, embedder
        self.load_error: str | None = None
        self._lock = threading.Lock()

    def _load(self) -> None:
        with self._lock:
            if self.handler is not None and self.embedder is not None:
                return
            try:
                from mock_llm import brain
            except Exception as exc:  # ImportError or a broken library: report it per request
                self.load_error = f"mock brain unavailable ({type(exc).__name__}: {exc})"
                return
            self.handler = self.handler or brain.dispatch
            self.embedder = self.embedder or brain.embedding

    def dispatch(self, req: MockRequest) -> MockReply:
        if self.handler is None:
            self._load()
        if self.handler is None:
            raise MockCannotAnswer(self.load_error or "mock has no handler")
        return self.handler(req)

    def embed(self, text: str) -> list[float]:
        if self.embedder is None:
            self._load()
        if self.embedder is None:
            raise MockCannotAnswer(self.load_error or "mock has no embedder")
        return self.embedder(text)


def _prompt_chars(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> int:
    chars = 0
    for m in messages:
        content = m.get("content")
        if isinstance(content, str):
            chars += len(content)
        elif content is not None:
            chars += len(json.dumps(content))
        if m.get("tool_calls"):
            chars += len(json.dumps(m["tool_calls"]))
    return chars + (len(json.dumps(tools)) if tools else 0)


def _corrupt(text: str) -> str:
    """Truncated JSON: what a model cut off mid-reply looks like."""
    return text[: max(1, len(text) // 2)] if text else '{"'


def _realistic_message(reply: MockReply, plan: Plan, structured: bool, counter: itertools.count) -> dict[str, Any]:
    """The reply re-rendered in the plan's forms (same meaning)."""
    if reply.tool_calls:
        calls = [(c.name, c.arguments) for c in reply.tool_calls]
        return forms.tool_turn(calls, plan, next(counter))
    if structured and reply.content is not None:
        return forms.structured(reply.content, plan)
    return forms.text(reply.content or "", plan)


def _reply_message(reply: MockReply, counter: itertools.count, malformed: bool) -> tuple[dict[str, Any], int]:
    """OpenAI assistant message (tool arguments as JSON strings) and its completion character count."""
    content = reply.content
    calls = []
    for call in reply.tool_calls:
        args = json.dumps(call.arguments)
        calls.append({"id": f"call_mock_{next(counter)}", "type": "function",
                      "function": {"name": call.name, "arguments": _corrupt(args) if malformed and not content else args}})
    if malformed and content is not None:
        content = _corrupt(content)
    elif malformed and not calls:
        content = _corrupt("")
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = calls
    return message, len(content or "") + sum(len(c["function"]["arguments"]) for c in calls)


def create_app(brain: Handler | None = None, *, embedder: Embedder | None = None, faults: FaultConfig | None = None,
               reject_key: str | None = DEFAULT_REJECT_KEY, realism: RealismConfig | None = None) -> Starlette:
    """The ASGI app. `brain=None` uses `mock_llm.brain` (lazily); any `Handler` works."""
    state = MockState(faults, realism)
    prefixes = PrefixCache()
    source = _Brain(brain, embedder)
    ids = itertools.count(1)

    def rejected(request: Request) -> bool:
        auth = request.headers.get("authorization", "")
        return reject_key is not None and auth == f"Bearer {reject_key}"

    async def model_request(request: Request, serve: Serve) -> JSONResponse:
        """Shared path of chat and embeddings: counters, auth, latency, faults, then `serve(body, prompt_tag, malformed)`."""
        state.enter(request.url.path)
        status = 500
        try:
            response = await _guarded(request, serve)
            status = response.status_code
            return response
        finally:
            state.leave(status)

    async def _guarded(request: Request, serve: Serve) -> JSONResponse:
        tag = request.headers.get(PROMPT_HEADER)
        if request.url.path.endswith("/chat/completions"):
            state.by_prompt[(tag or "untagged").rpartition("@")[0] or tag or "untagged"] += 1
        if rejected(request):
            return _error(401, "Incorrect API key provided (the mock rejects this key by design).",
                          "invalid_request_error")
        try:
            body = await request.json()
        except (json.JSONDecodeError, UnicodeDecodeError):
            return _error(400, "request body is not valid JSON", "invalid_request_error")
        if not isinstance(body, dict):
            return _error(400, "request body must be a JSON object", "invalid_request_error")
        delay = state.latency_s()
        fault = state.next_fault()
        if delay:
            await asyncio.sleep(delay)
        if fault == "429":
            f = state.faults
            header = ({"retry-after-ms": str(int(f.retry_after_s * 1000))} if f.retry_after_ms_header
                      else {"Retry-After": f"{f.retry_after_s:g}"})
            return _error(429, "Rate limit reached (mock fault injection).", "rate_limit_error", header)
        if fault == "500":
            return _error(500, "Internal server error (mock fault injection).", "server_error")
        if fault == "timeout":
            await asyncio.sleep(state.faults.timeout_s)
            return _error(504, "Stalled past the client timeout (mock fault injection).", "server_error")
        try:
            return await serve(body, tag, fault == "malformed")
        except MockCannotAnswer as exc:
            return _error(400, f"mock cannot answer: {exc}", "invalid_request_error")

    async def serve_chat(body: dict[str, Any], tag: str | None, malformed: bool) -> JSONResponse:
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            return _error(400, "'messages' must be a non-empty list", "invalid_request_error")
        prompt_id = version = None
        if tag:
            try:
                prompt_id, version = parse_tag(tag)
            except ValueError as exc:
                return _error(400, str(exc), "invalid_request_error")
        try:
            payload = extract_input(messages)
        except json.JSONDecodeError:
            payload = None
        tools = body.get("tools") or None
        model = str(body.get("model") or "mock")
        plan = None if malformed or state.realism.mode == "off" else plan_for(state.realism, request_key(body, tag))
        req = MockRequest(prompt_id=prompt_id, prompt_version=version, payload=payload, messages=messages,
                          tools=tools, model=model, realism=plan)
        reply = await anyio.to_thread.run_sync(source.dispatch, req)
        if plan is None:
            message, _ = _reply_message(reply, ids, malformed)
        else:
            message = _realistic_message(reply, plan, prompt_id in STRUCTURED_PROMPTS, ids)
            state.forms_used.update(plan.forms)
        finish = "tool_calls" if message.get("tool_calls") else "stop"
        room = body.get("max_completion_tokens") or body.get("max_tokens")
        if plan is not None and "length" in plan.forms and not room:
            room = int(needed_room(message) * TRUNCATE_AT)  # the "server default" output limit this reply runs into
        if room and int(room) < needed_room(message):
            message, finish = truncate(message, int(room)), "length"
        prompt_tokens = estimate_tokens(_prompt_chars(messages, tools))
        cached_tokens = prefixes.serve(prompt_text(model, messages, tools), prompt_tokens)
        state.prompt_tokens += prompt_tokens
        state.cached_tokens += cached_tokens
        completion_tokens = needed_room(message)
        response: dict[str, Any] = {
            "id": f"chatcmpl-mock-{next(ids)}", "object": "chat.completion", "created": int(time.time()),
            "model": model, "system_fingerprint": FINGERPRINT,
            "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish}],
        }
        include, usage = forms.usage_field({"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                                            "total_tokens": prompt_tokens + completion_tokens}, plan, cached_tokens)
        if include:
            response["usage"] = usage
        return JSONResponse(response, headers=MOCK_HEADERS)

    async def serve_embeddings(body: dict[str, Any], tag: str | None, malformed: bool) -> JSONResponse:
        raw = body.get("input")
        texts = [raw] if isinstance(raw, str) else raw
        if not isinstance(texts, list) or not texts or not all(isinstance(t, str) for t in texts):
            return _error(400, "'input' must be a string or a non-empty list of strings (token arrays are not "
                               "supported by the mock)", "invalid_request_error")
        vectors = await anyio.to_thread.run_sync(lambda: [source.embed(t) for t in texts])
        state.embedding_requests += 1
        state.embeddings += len(texts)
        as_b64 = body.get("encoding_format") == "base64"
        data = [{"object": "embedding", "index": i,
                 "embedding": base64.b64encode(array("f", v).tobytes()).decode() if as_b64 else list(v)}
                for i, v in enumerate(vectors)]
        tokens = estimate_tokens(sum(len(t) for t in texts))
        return JSONResponse({"object": "list", "data": data, "model": str(body.get("model") or "mock"),
                             "usage": {"prompt_tokens": tokens, "total_tokens": tokens}}, headers=MOCK_HEADERS)

    async def chat(request: Request) -> JSONResponse:
        return await model_request(request, serve_chat)

    async def embeddings(request: Request) -> JSONResponse:
        return await model_request(request, serve_embeddings)

    async def models(request: Request) -> JSONResponse:
        names = sorted(set(StageModels().model_dump().values()))
        return JSONResponse({"object": "list", "data": [
            {"id": n, "object": "model", "created": 0, "owned_by": FINGERPRINT} for n in names]}, headers=MOCK_HEADERS)

    async def stats(request: Request) -> JSONResponse:
        return JSONResponse(state.snapshot(), headers=MOCK_HEADERS)

    async def reset(request: Request) -> JSONResponse:
        state.reset()
        prefixes.clear()
        return JSONResponse(state.snapshot(), headers=MOCK_HEADERS)

    async def set_realism(request: Request) -> JSONResponse:
        try:
            changes = await request.json()
            if isinstance(changes, str):
                config = RealismConfig.parse(changes)
            elif isinstance(changes, dict):
                config = RealismConfig.model_validate(changes)
            else:
                raise ValueError("body must be a realism spec string or a RealismConfig object")
        except (ValueError, json.JSONDecodeError) as exc:
            return _error(400, f"bad realism setting: {exc}", "invalid_request_error")
        state.realism = config
        return JSONResponse(config.model_dump(), headers=MOCK_HEADERS)

    async def set_faults(request: Request) -> JSONResponse:
        try:
            changes = await request.json()
            if not isinstance(changes, dict):
                raise ValueError("body must be a JSON object of FaultConfig fields")
            config = state.update_faults(changes)
        except (ValueError, json.JSONDecodeError) as exc:  # pydantic ValidationError is a ValueError
            return _error(400, f"bad fault config: {exc}", "invalid_request_error")
        return JSONResponse({**config.model_dump(), "script": list(state.script)}, headers=MOCK_HEADERS)

    return Starlette(routes=[
        Route("/v1/chat/completions", chat, methods=["POST"]),
        Route("/v1/embeddings", embeddings, methods=["POST"]),
        Route("/v1/models", models, methods=["GET"]),
        Route("/mock/stats", stats, methods=["GET"]),
        Route("/mock/reset", reset, methods=["POST"]),
        Route("/mock/faults", set_faults, methods=["POST"]),
        Route("/mock/realism", set_realism, methods=["POST"]),
    ])


def uvicorn_config(app: Starlette, host: str, port: int, log_level: str = "warning") -> uvicorn.Config:
    return uvicorn.Config(app, host=host, port=port, log_level=log_level, access_log=False, lifespan="off",
                          timeout_graceful_shutdown=1, backlog=2048)


def listening_socket(host: str, port: int) -> socket.socket:
    """A bound TCP socket for uvicorn (port 0 = any free port, known before the server starts).

    `proto=IPPROTO_TCP` matters: accepted sockets inherit it, and asyncio only sets TCP_NODELAY on
    sockets whose proto says TCP; without it every response waits ~40 ms on Nagle + delayed ACK.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    return sock


class MockServer:
    """The mock on a free loopback port in a background thread: `with MockServer() as m: m.base_url`."""

    def __init__(self, brain: Handler | None = None, *, embedder: Embedder | None = None,
                 faults: FaultConfig | None = None, host: str = "127.0.0.1", port: int = 0,
                 reject_key: str | None = DEFAULT_REJECT_KEY, realism: RealismConfig | str | None = None) -> None:
        self.host = host
        self._sock = listening_socket(host, port)
        self.port = self._sock.getsockname()[1]
        if isinstance(realism, str):
            realism = RealismConfig.parse(realism)
        app = create_app(brain, embedder=embedder, faults=faults, reject_key=reject_key, realism=realism)
        self._server = uvicorn.Server(uvicorn_config(app, host, self.port))
        self._thread: threading.Thread | None = None
        self._http = httpx.Client(base_url=self.root_url, timeout=10.0)

    @property
    def root_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def base_url(self) -> str:
        """What `OPENAI_BASE_URL` / `llm.base_url` should be."""
        return f"{self.root_url}/v1"

    def start(self) -> "MockServer":
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [self._sock]},
                                        name=f"mock-llm:{self.port}", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 10.0
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"mock LLM server failed to start on {self.root_url}")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=10.0)
        self._http.close()
        self._sock.close()

    def __enter__(self) -> "MockServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stats(self) -> dict[str, Any]:
        return self._http.get("/mock/stats").raise_for_status().json()

    def reset(self) -> dict[str, Any]:
        return self._http.post("/mock/reset").raise_for_status().json()

    def set_realism(self, spec: str | RealismConfig) -> dict[str, Any]:
        """`off`, `on`, `all`, `"think,no_usage"` or a RealismConfig; until `reset()` restores the startup one."""
        body: Any = spec.model_dump() if isinstance(spec, RealismConfig) else spec
        return self._http.post("/mock/realism", json=body).raise_for_status().json()

    def set_faults(self, config: dict[str, Any] | None = None, **changes: Any) -> dict[str, Any]:
        """E.g. `set_faults(script=["429", "ok"], retry_after_s=0.3)` or `set_faults(p_500=0.1)`."""
        return self._http.post("/mock/faults", json={**(config or {}), **changes}).raise_for_status().json()
