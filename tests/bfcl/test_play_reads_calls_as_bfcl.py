"""Spec: an evaluation reads a model's calls as BFCL's OpenAI FC handler does: only from `tool_calls`,
arguments decoded as sent. Calls written as text (an endpoint without a tool parser) and empty
arguments are recovered by our gateway for the factory, but BFCL's handler cannot decode them and
ends the turn; reading them would score higher than the official harness (a red team got 1.0 where
it gives 0). The executor here is the package's own, in this process."""

from __future__ import annotations

import asyncio
from typing import Any

from envscaler_core.bfcl.data import find_task
from envscaler_core.bfcl.play import play_task
from envscaler_core.bfcl.reference import InProcessTask
from envscaler_core.rollout.agents import AgentTurn

TASK = "multi_turn_base_0"  # turn 0 starts with a call that takes no arguments: pwd() / ls()


class Scripted:
    """Sends `first` as its first message of every turn, then a text reply that ends the turn."""

    def __init__(self, first: dict[str, Any]) -> None:
        self.first, self.spoke = first, False

    async def step(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> AgentTurn:
        answered = messages[-1]["role"] == "tool"
        return AgentTurn(message={"role": "assistant", "content": "done"} if answered else self.first)


def _play(first: dict[str, Any]) -> Any:
    executor = InProcessTask(find_task(TASK))
    try:
        return asyncio.run(play_task(find_task(TASK), Scripted(first), executor))
    finally:
        executor.close()


def _call(name: str, arguments: Any) -> dict[str, Any]:
    return {"id": "call_1", "type": "function", "function": {"name": name, "arguments": arguments}}


def test_calls_in_tool_calls_are_played() -> None:
    played = _play({"role": "assistant", "content": None, "tool_calls": [_call("ls", "{}")]})
    assert played.decoded[0] == [["ls()"]] and played.observations


def test_a_call_written_as_text_is_not_a_call() -> None:
    text = '<tool_call>{"name": "ls", "arguments": {}}</tool_call>'
    played = _play({"role": "assistant", "content": text})
    assert all(steps == [] for steps in played.decoded) and not played.observations
    assert played.messages[1] == {"role": "assistant", "content": text}  # the history keeps what was said


def test_empty_or_null_arguments_cannot_be_decoded_and_end_the_turn() -> None:
    for arguments in ("", None):
        played = _play({"role": "assistant", "content": None, "tool_calls": [_call("ls", arguments)]})
        assert all(steps == [] for steps in played.decoded) and not played.observations
        tool_messages = [m for m in played.messages if m["role"] == "tool"]
        assert tool_messages and all(m["content"].startswith("Error during decoding") for m in tool_messages)


def test_arguments_sent_as_an_object_are_read_as_bfcl_reads_them() -> None:
    """BFCL's `convert_to_function_call` takes a dict as it is (only a string is JSON-decoded)."""
    played = _play({"role": "assistant", "content": None, "tool_calls": [_call("ls", {"a": True})]})
    assert played.decoded[0] == [["ls(a=True)"]]


def test_a_null_or_missing_function_name_is_one_failed_call_and_the_step_goes_on() -> None:
    """The SDK keeps a JSON null (or absent) name as None; BFCL's decoder writes `None()`, which fails
    alone ("'NoneType' object is not callable") while the rest of the step runs."""
    for function in ({"name": None, "arguments": "{}"}, {"arguments": "{}"}):
        nameless = {"id": "call_0", "type": "function", "function": function}
        played = _play({"role": "assistant", "content": None, "tool_calls": [nameless, _call("ls", "{}")]})
        assert played.decoded[0] == [["None()", "ls()"]]
        assert played.observations[0] == "Error during execution: 'NoneType' object is not callable"
        assert played.observations[1].startswith('{"current_directory_content"')


def test_a_number_as_function_name_is_one_failed_call() -> None:
    played = _play({"role": "assistant", "content": None, "tool_calls": [_call(7, "{}"), _call("ls", "{}")]})  # type: ignore[arg-type]
    assert played.decoded[0] == [["7()", "ls()"]]
    assert played.observations[0] == "Error during execution: 'int' object is not callable"


def test_a_custom_tool_call_makes_the_step_unreadable_and_ends_the_turn() -> None:
    """The SDK reads `"type": "custom"` as a custom tool call, which has no function: BFCL's handler
    reads no calls from that message, so none of its calls runs and the turn ends."""
    custom = {**_call("ls", "{}"), "type": "custom"}
    played = _play({"role": "assistant", "content": None, "tool_calls": [_call("pwd", "{}"), custom]})
    assert all(steps == [] for steps in played.decoded) and not played.observations


def test_a_list_as_function_name_makes_the_step_unreadable() -> None:
    played = _play({"role": "assistant", "content": None, "tool_calls": [_call(["ls"], "{}")]})  # type: ignore[arg-type]
    assert all(steps == [] for steps in played.decoded) and not played.observations


def test_the_history_sends_back_the_models_arguments_exactly_as_written() -> None:
    """BFCL's handler puts the SDK's argument text in the history: `{"folder":"document"}` and
    `{"\\u00e9": 1}` go back as written, not re-serialised as `{"folder": "document"}`, `{"é": 1}`."""
    for arguments in ('{"folder":"document"}', '{"\\u00e9": "document"}', '{ "folder" : "x" }'):
        played = _play({"role": "assistant", "content": None, "tool_calls": [_call("cd", arguments)]})
        sent = next(m for m in played.messages if m["role"] == "assistant" and m.get("tool_calls"))
        assert sent["tool_calls"][0]["function"]["arguments"] == arguments
