"""Spec: an evaluation reads each reply as BFCL's OpenAI FC handler does, whatever its `finish_reason`.
BFCL sends each request once and reads the first choice as it came: a closing text cut off by the
output limit (`length`), or an empty reply a content filter stopped, ends the turn and play goes on.
The factory's reply policy (ask a cut-off reply again with more room, refuse it or a filtered one as
unusable) made such tasks invalid where BFCL scores them valid, sent requests BFCL never sends, and
stored the task with nothing played (turns 0, no messages, usage 0/0). A task that does end early
(its prompt refused) keeps what was played. A real gateway over HTTP to a scripted endpoint, a real
sandbox episode."""

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
from sandbox import SandboxPool

TASK = find_task("multi_turn_base_3")  # two turns
USAGE = {"prompt_tokens": 100, "completion_tokens": 7, "total_tokens": 107}


class Endpoint:
    """Answers each turn's first request with its ground-truth calls, every later one with `closing`
    (a message and its finish_reason; `refuse_turn`: that turn's first request gets HTTP 400 context)."""

    def __init__(self, closing: Any, refuse_turn: int | None = None) -> None:
        self.closing, self.refuse_turn, self.bodies = closing, refuse_turn, []
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
                return 400, {"error": {"message": "This model's maximum context length is 128 tokens.",
                                       "code": "context_length_exceeded", "type": "invalid_request_error"}}
            calls = []
            for i, text in enumerate(TASK.ground_truth[turn]):
                name, kwargs = parse_call(text, TASK.involved_classes)
                calls.append({"id": f"c{turn}_{i}", "type": "function",
                              "function": {"name": name, "arguments": json.dumps(kwargs)}})
            message, finish = {"role": "assistant", "content": None, "tool_calls": calls}, "tool_calls"
        else:
            message, finish = self.closing(turn)
        return 200, {"id": "x", "object": "chat.completion", "model": "m", "usage": USAGE,
                     "choices": [{"index": 0, "message": message, "finish_reason": finish}]}


@pytest.fixture
def endpoint_for() -> Iterator[Any]:
    made: list[Endpoint] = []

    def make(closing: Any, refuse_turn: int | None = None) -> Endpoint:
        made.append(Endpoint(closing, refuse_turn))
        return made[-1]

    yield make
    for endpoint in made:
        endpoint.server.shutdown()
        endpoint.server.server_close()


def _evaluate(endpoint: Endpoint, pool: SandboxPool) -> Any:
    async def run() -> Any:
        gateway = LLMGateway(LLMSettings(base_url=endpoint.url, max_retries=0))
        try:
            request = EvalRequest(subsets=["base"], agent="llm", model="m", temperature=0.001)
            return await evaluate_task(TASK, request, pool, gateway)
        finally:
            await gateway.aclose()

    return asyncio.run(run())


def test_a_closing_text_cut_off_by_the_output_limit_ends_the_turn(endpoint_for: Any, bfcl_pool: SandboxPool) -> None:
    endpoint = endpoint_for(lambda turn: ({"role": "assistant", "content": "I have moved th"}, "length"))
    result = _evaluate(endpoint, bfcl_pool)
    assert (result.valid, result.error_type, result.turns, result.steps) == (True, None, 2, 4)


def test_a_cut_off_reply_is_not_asked_again(endpoint_for: Any, bfcl_pool: SandboxPool) -> None:
    """BFCL sends each request once; before, each cut-off closing text was sent twice more with max_tokens."""
    endpoint = endpoint_for(lambda turn: ({"role": "assistant", "content": "I have moved th"}, "length"))
    _evaluate(endpoint, bfcl_pool)
    assert len(endpoint.bodies) == 4
    assert not any("max_tokens" in body or "max_completion_tokens" in body for body in endpoint.bodies)


def test_an_empty_reply_a_content_filter_stopped_ends_the_turn(endpoint_for: Any, bfcl_pool: SandboxPool) -> None:
    endpoint = endpoint_for(lambda turn: ({"role": "assistant", "content": None}, "content_filter") if turn == 1
                            else ({"role": "assistant", "content": "Done."}, "stop"))
    result = _evaluate(endpoint, bfcl_pool)
    assert (result.valid, result.error_type, result.turns, result.steps) == (True, None, 2, 4)


def test_a_task_whose_prompt_is_refused_keeps_what_was_played(endpoint_for: Any, bfcl_pool: SandboxPool) -> None:
    endpoint = endpoint_for(lambda turn: ({"role": "assistant", "content": "Done."}, "stop"), refuse_turn=1)
    result = _evaluate(endpoint, bfcl_pool)
    assert (result.valid, result.error_type) == (False, "multi_turn:inference_error")
    assert result.decoded == [[TASK.ground_truth[0]], []] and result.turns == 2 and result.steps == 2
    assert result.tool_calls == len(TASK.ground_truth[0])
    assert [m["role"] for m in result.messages] == ["user", "assistant", *["tool"] * len(TASK.ground_truth[0]),
                                                    "assistant", "user"]
    assert (result.usage.prompt_tokens, result.usage.completion_tokens) == (200, 14)
