"""Tool-call ids every common chat template accepts, written into both SFT files.

The rollout names calls `call_<turn>_<i>` (a provider's own ids, e.g. `call_mock_7439`, when the model gave
them). OpenAI takes any string, but Mistral's v0.3 template raises on anything that is not 9 alphanumeric
characters (outside check, 2026-11-26: every SFT row refused). The new id is derived from the trajectory's
fingerprint and the call's position in it, so two exports of one run stay byte-identical, and each `tool`
message's `tool_call_id` is rewritten with the call it answers.
"""

from __future__ import annotations

import hashlib
from typing import Any

ID_LENGTH = 9


def template_safe_id(trajectory_fp: str, position: int, taken: set[str]) -> str:
    """9 lowercase hex characters (alphanumeric) for the call at `position` (0-based over the whole
    trajectory); a different salt on the rare clash with an id already `taken` in the trajectory."""
    salt = 0
    while True:
        digest = hashlib.sha256(f"{trajectory_fp}/{position}/{salt}".encode()).hexdigest()[:ID_LENGTH]
        if digest not in taken:
            return digest
        salt += 1


def with_template_safe_ids(trajectory_fp: str, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`messages` (protocol-checked: each tool message answers a call of the assistant turn before it)
    with every call id and `tool_call_id` replaced; the input is not modified."""
    out: list[dict[str, Any]] = []
    taken: set[str] = set()
    pending: list[tuple[str, str]] = []  # (old id, new id) of the last assistant turn's unanswered calls
    position = 0
    for msg in messages:
        msg = dict(msg)
        if msg.get("role") == "assistant" and msg.get("tool_calls"):
            pending, calls = [], []
            for call in msg["tool_calls"]:
                new = template_safe_id(trajectory_fp, position, taken)
                taken.add(new)
                position += 1
                pending.append((call["id"], new))
                calls.append({**call, "id": new})
            msg["tool_calls"] = calls
        elif msg.get("role") == "tool":
            # the first unanswered call with this id: a provider may reuse one id across parallel calls
            index = next(i for i, (old, _) in enumerate(pending) if old == msg.get("tool_call_id"))
            msg["tool_call_id"] = pending.pop(index)[1]
        out.append(msg)
    return out
