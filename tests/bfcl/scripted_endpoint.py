"""A scripted OpenAI-compatible endpoint that plays one BFCL task: each turn's first request gets the
ground-truth calls, every later one a closing reply the spec chooses; it keeps every request body."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from envscaler_core.bfcl.calls import parse_call
from envscaler_core.bfcl.data import find_task
from envscaler_core.bfcl.evaluate import EvalRequest, evaluate_task
from envscaler_core.config import LLMSettings
from envscaler_core.llm import LLMGateway

TASK = find_task("multi_turn_base_3")  # two turns
USAGE = {"prompt_tokens": 100, "completion_tokens": 7, "total_tokens": 107}


class Endpoint:
    """Answers each turn's first request with its ground-truth calls, every later one with `closing`
    (a message and its finish_reason; `refuse_turn`: that turn's first request gets HTTP 400 `refusal`,
    by default a context-length error; `choices`: how the answer's choice is sent, e.g. beside others)."""

    def __init__(self, closing: Any, refuse_turn: int | None = None, arguments: Any = json.dumps,
                 refusal: dict[str, Any] | None = None, choices: Any = None) -> None:
        self.closing, self.refuse_turn, self.arguments, self.bodies = closing, refuse_turn, arguments, []
        self.choices = choices or (lambda choice: [choice])  # the one choice -> the `choices` list sent
        self.refusal = refusal or {"message": "This model's maximum context length is 128 tokens.",
                                   "code": "context_length_exceeded", "type": "invalid_request_error"}
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))))
                endpoint.bodies.append(body)
                status, answer = endpoint.answer(body["messages"])
                payload = json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def answer(self, messages: list[dict[str, Any]]) -> tuple[int, dict[str, Any]]:
        turn = sum(1 for m in messages if m["role"] == "user") - 1
        if messages[-1]["role"] == "user":
            if turn == self.refuse_turn:
                return 400, {"error": self.refusal}
            calls = []
            for i, text in enumerate(TASK.ground_truth[turn]):
                name, kwargs = parse_call(text, TASK.involved_classes)
                calls.append({"id": f"c{turn}_{i}", "type": "function",
                              "function": {"name": name, "arguments": self.arguments(kwargs)}})
            message, finish = {"role": "assistant", "content": None, "tool_calls": calls}, "tool_calls"
        else:
            message, finish = self.closing(turn)
        return 200, {"id": "x", "object": "chat.completion", "model": "m", "usage": USAGE,
                     "choices": self.choices({"index": 0, "message": message, "finish_reason": finish})}


@pytest.fixture
def endpoint_for() -> Iterator[Any]:
    made: list[Endpoint] = []

    def make(closing: Any, refuse_turn: int | None = None, arguments: Any = json.dumps,
             refusal: dict[str, Any] | None = None, choices: Any = None) -> Endpoint:
        made.append(Endpoint(closing, refuse_turn, arguments, refusal, choices))
        return made[-1]

    yield make
    for endpoint in made:
        endpoint.server.shutdown()
        endpoint.server.server_close()


def evaluate_over(endpoint: Endpoint, pool: Any) -> Any:
    """`TASK` evaluated with `--agent llm` against `endpoint`, through a real gateway (no store)."""
    async def run() -> Any:
        gateway = LLMGateway(LLMSettings(base_url=endpoint.url, max_retries=0))
        try:
            request = EvalRequest(subsets=["base"], agent="llm", model="m", temperature=0.001)
            return await evaluate_task(TASK, request, pool, gateway)
        finally:
            await gateway.aclose()

    return asyncio.run(run())
