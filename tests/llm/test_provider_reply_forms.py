"""Spec: the forms of a fifth outside check (`/tmp/rt5-replies`, a proxy answering as one provider at a time),
fed verbatim through the real gateway and the real `openai` client from a scripted local endpoint: every
wording a thinking endpoint uses to ask for its reasoning back; the content filters and context limits of
DeepSeek, DashScope, Moonshot and Zhipu as refusals of one prompt; every provider's cut-off finish reason;
a prompt count that leaves out its cached part; a retry delay stated in the error body."""

from __future__ import annotations

import json
import time

import pytest

from envscaler_core.llm import LLMRequestRejected
from envscaler_core.llm.errors import LLMPromptRefused
from tests.llm.helpers import call_rows, scripted_gateway as gateway
from tests.llm.scripted_endpoint import STATUS, completion

TOOLS = [{"type": "function", "function": {"name": "cancel_order", "parameters": {"type": "object", "properties": {
    "order_id": {"type": "string"}}}}}]
USER = [{"role": "user", "content": "cancel order 4"}]
CALL = {"id": "call_1", "type": "function", "function": {"name": "cancel_order", "arguments": '{"order_id": "4"}'}}


def _refusal(message: str) -> dict:
    return {STATUS: 400, "error": {"message": message, "type": "invalid_request_error", "param": None,
                                   "code": "invalid_request_error"}}


# ---- 1: the reasoning asked back, in every wording -------------------------------------------------------

ASKED_BACK = {
    "deepseek-v4": "The `reasoning_content` in the thinking mode must be passed back to the API.",
    "deepseek-v3.2": "Missing `reasoning_content` field in the assistant message at message index 1.",
    "kimi-k2": "thinking is enabled but reasoning_content is missing in assistant tool call message at index 1",
    "required": "reasoning_content is required for assistant messages with tool_calls when thinking is enabled",
    "expected": "Expected field `reasoning_content` in assistant message 1",
    "not-provided": "reasoning_content was not provided for the assistant message at index 1",
}


@pytest.mark.parametrize("wording", ASKED_BACK.values(), ids=ASKED_BACK.keys())
def test_a_400_asking_for_the_reasoning_back_is_answered_by_sending_it(endpoint, wording) -> None:
    """Before, DeepSeek V4's wording (no "missing", no "required") stopped every run at the second turn of
    its first rollout: "the request itself is wrong; it was not retried"."""
    endpoint.script(completion(None, finish="tool_calls", reasoning_content="Cancel it.", tool_calls=[CALL]),
                    _refusal(wording), completion("Order 4 is cancelled."))
    gw = gateway(endpoint)
    first = gw.chat_sync(USER, tools=TOOLS)
    history = [*USER, first.message, {"role": "tool", "tool_call_id": "call_1", "content": "ok"}]
    assert gw.chat_sync(history, tools=TOOLS).message["content"] == "Order 4 is cancelled."
    assert endpoint.requests[2]["messages"][1]["reasoning_content"] == "Cancel it."


def test_a_400_refusing_the_reasoning_field_is_not_read_as_asking_for_it(endpoint) -> None:
    """The field named in a refusal of it ("not permitted") is the request's form, not a missing turn."""
    endpoint.script(completion(None, finish="tool_calls", reasoning_content="Cancel it.", tool_calls=[CALL]),
                    _refusal("Extra inputs are not permitted: messages.1.reasoning_content"))
    gw = gateway(endpoint)
    first = gw.chat_sync(USER, tools=TOOLS)
    with pytest.raises(LLMRequestRejected, match="not permitted"):
        gw.chat_sync([*USER, first.message, {"role": "tool", "tool_call_id": "call_1", "content": "ok"}], tools=TOOLS)
    assert len(endpoint.requests) == 2
