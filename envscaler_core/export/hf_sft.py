"""SFT lines in the Hugging Face chat-template convention (`sft_hf.jsonl`): what
`tokenizer.apply_chat_template(messages, tools=tools)` and TRL's SFTTrainer read.

The rows are sft_messages.jsonl's, in the same order, with two differences the templates need:
a tool call's `arguments` is a JSON *object* (Qwen2.5 and Llama-3.1 templates `tojson` it, so the
OpenAI string came out double-encoded, `"{\\"id\\": 1}"`: outside check, 2026-11-26), and assistant
turns keep `reasoning_content` (Qwen3's template renders it as the turn's thinking). Provenance
(`id`, `env_id`, `scenario_fp`, `mode`, `reward`) stays on the row: Hugging Face loaders keep or
ignore extra columns.
"""

from __future__ import annotations

import json
from typing import Any

from envscaler_core.export.row_tools import row_tools
from envscaler_core.export.sft import exported_tools, sft_messages
from envscaler_core.models.trajectory import Trajectory


def _with_object_arguments(message: dict[str, Any]) -> dict[str, Any]:
    calls = message.get("tool_calls")
    if not calls:
        return message
    return {**message, "tool_calls": [
        {**c, "function": {**c["function"], "arguments": json.loads(c["function"]["arguments"])}} for c in calls]}


def hf_line(fingerprint: str, traj: Trajectory) -> dict[str, Any]:
    """One JSONL object of a protocol-checked trajectory (arguments are JSON-object strings)."""
    return {
        "messages": [_with_object_arguments(m) for m in sft_messages(fingerprint, traj)],
        "tools": exported_tools(row_tools(traj)),
        "id": fingerprint,
        "env_id": traj.env_id,
        "scenario_fp": traj.scenario_fp,
        "mode": traj.mode,
        "reward": traj.reward,
    }
