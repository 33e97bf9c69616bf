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
