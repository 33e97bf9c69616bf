"""Spec: a reply that carries its calls both as structured `tool_calls` and written as text in its
content (vLLM#25560, gpt-oss: the call's text leaks into content) holds each call once, as a call (an
outside check: every SFT row held `"content": "<tool_call>\\n{...}\\n</tool_call>"` beside the same
call in `tool_calls`). Text calls that are not the structured ones stay in the content. Scripted local
endpoint, real gateway."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.llm.helpers import scripted_gateway as gateway
from tests.llm.scripted_endpoint import completion

TOOLS = [{"type": "function", "function": {"name": name, "description": name, "parameters": {
    "type": "object", "properties": {"doctor_id": {"type": "string"}}, "required": ["doctor_id"]}}}
    for name in ("get_doctor", "book_slot")]
STRUCTURED = [{"id": "call_a", "type": "function",
               "function": {"name": "get_doctor", "arguments": '{"doctor_id": "D-1"}'}}]
ECHOES = {
    "hermes": '<tool_call>\n{"name": "get_doctor", "arguments": {"doctor_id": "D-1"}}\n</tool_call>',
    "mistral": '[TOOL_CALLS]get_doctor[ARGS]{"doctor_id": "D-1"}',
    "llama-python-tag": '<|python_tag|>{"name": "get_doctor", "parameters": {"doctor_id": "D-1"}}',
    "qwen3-coder": "<tool_call>\n<function=get_doctor>\n<parameter=doctor_id>\nD-1\n</parameter>\n</function>\n</tool_call>",
}


def _turn(endpoint: Any, content: str, calls: list[dict[str, Any]] = STRUCTURED) -> dict[str, Any]:
    endpoint.script(completion(content, finish="tool_calls", tool_calls=calls))
    return gateway(endpoint).chat_sync([{"role": "user", "content": "Who is D-1?"}], tools=TOOLS).message


@pytest.mark.parametrize("dialect", sorted(ECHOES))
def test_a_call_echoed_as_text_beside_the_same_structured_call_is_kept_once(endpoint, dialect) -> None:
    """Before: the content kept the call's text, so the turn (and its SFT row) held the call twice."""
    message = _turn(endpoint, ECHOES[dialect])
    assert message["content"] is None
    assert [(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in message["tool_calls"]] == [
        ("get_doctor", {"doctor_id": "D-1"})]


def test_prose_beside_the_echoed_call_stays_the_content(endpoint) -> None:
    message = _turn(endpoint, "Let me look the doctor up.\n" + ECHOES["hermes"])
    assert message["content"] == "Let me look the doctor up."


def test_an_echo_with_its_arguments_in_another_key_order_is_still_an_echo(endpoint) -> None:
    two = '{"doctor_id": "D-1", "slot": "9:00"}'
    calls = [{"id": "call_b", "type": "function", "function": {"name": "book_slot", "arguments": two}}]
    echo = '<tool_call>\n{"name": "book_slot", "arguments": {"slot": "9:00", "doctor_id": "D-1"}}\n</tool_call>'
    assert _turn(endpoint, echo, calls)["content"] is None


def test_a_written_call_that_is_not_a_structured_one_stays_in_the_content(endpoint) -> None:
    """Not an echo: dropping it would lose what the model said."""
    other = '<tool_call>\n{"name": "book_slot", "arguments": {"doctor_id": "D-2"}}\n</tool_call>'
    message = _turn(endpoint, other)
    assert message["content"] == other
    assert len(message["tool_calls"]) == 1
