"""Spec: a 400 that says `reasoning_content` is not wanted is not read as asking for it back, in every
wording an outside check sent, through the real gateway and `openai` client against a scripted endpoint.
Before, "no longer supported; it must be omitted" and "not required and not expected" each led to a
re-send with the field, and every later request carried it."""

from __future__ import annotations

import pytest

from envscaler_core.llm import LLMRequestRejected
from tests.llm.helpers import scripted_gateway as gateway
from tests.llm.scripted_endpoint import STATUS, completion

TOOLS = [{"type": "function", "function": {"name": "cancel_order", "parameters": {"type": "object", "properties": {
    "order_id": {"type": "string"}}}}}]
USER = [{"role": "user", "content": "cancel order 4"}]
CALL = {"id": "call_1", "type": "function", "function": {"name": "cancel_order", "arguments": '{"order_id": "4"}'}}
NOT_WANTED = {
    "no-longer": "reasoning_content is no longer supported; it must be omitted from requests",
    "not-required": "reasoning_content is not required and not expected for this model",
    "deprecated": "The reasoning_content field is deprecated and should be removed from assistant messages",
    "do-not-send": "Do not send reasoning_content back in assistant messages",
}


@pytest.mark.parametrize("wording", NOT_WANTED.values(), ids=NOT_WANTED.keys())
def test_a_400_saying_the_reasoning_is_not_wanted_is_not_answered_by_sending_it(endpoint, wording) -> None:
    endpoint.script(completion(None, finish="tool_calls", reasoning_content="Cancel it.", tool_calls=[CALL]),
                    {STATUS: 400, "error": {"message": wording, "type": "invalid_request_error"}})
    gw = gateway(endpoint)
    first = gw.chat_sync(USER, tools=TOOLS)
    with pytest.raises(LLMRequestRejected, match="the request itself is wrong"):
        gw.chat_sync([*USER, first.message, {"role": "tool", "tool_call_id": "call_1", "content": "ok"}], tools=TOOLS)
    assert len(endpoint.requests) == 2
    assert all("reasoning_content" not in m for m in endpoint.requests[1]["messages"])
