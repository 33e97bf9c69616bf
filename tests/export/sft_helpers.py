"""Comparing exported SFT messages with the stored trajectory they came from."""

from __future__ import annotations

from typing import Any


def with_ids_of(exported: list[dict[str, Any]], stored: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`stored` with each call id and tool_call_id replaced by the exported one at the same place, so the
    rest of the two conversations can be compared for equality."""
    assert len(exported) == len(stored)
    out = []
    for exp, msg in zip(exported, stored, strict=True):
        msg = dict(msg)
        if msg.get("tool_calls"):
            assert len(exp["tool_calls"]) == len(msg["tool_calls"])
            msg["tool_calls"] = [{**c, "id": e["id"]} for c, e in zip(msg["tool_calls"], exp["tool_calls"], strict=True)]
        if msg.get("role") == "tool":
            msg["tool_call_id"] = exp["tool_call_id"]
        out.append(msg)
    return out


class MalformedArgs:
    """An agent whose one tool call has arguments that are not JSON, then says it is done: the rollout
    completes, and only the export's protocol check refuses the trajectory."""

    name = "malformed"

    def __init__(self) -> None:
        self.sent = False

    async def step(self, messages, tools):  # type: ignore[no-untyped-def]
        from envscaler_core.rollout import AgentTurn

        if self.sent:
            return AgentTurn(message={"role": "assistant", "content": "Task Completed"})
        self.sent = True
        return AgentTurn(message={"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "get_book", "arguments": "{not json"}}]})
