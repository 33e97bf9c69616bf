"""SFT lines in OpenAI's chat fine-tuning format (`messages` + `tools`, nothing else per row).

Trajectories are stored in this shape already (the rollout loop normalises every assistant message);
the exporter keeps only the keys OpenAI's fine-tuning format documents and refuses a conversation that
breaks the protocol, because a trainer applying a chat template to it either crashes or silently learns
a malformed tool call. Reasoning and provenance are not OpenAI keys: reasoning goes to the Hugging Face
file (`hf_sft.py`), provenance to a sidecar with one line per row (`sft_meta_line`).
"""

from __future__ import annotations

import json
from typing import Any

from envscaler_core.export.call_ids import with_template_safe_ids
from envscaler_core.export.row_tools import row_tools
from envscaler_core.llm.sent_tools import portable_schema
from envscaler_core.models.env import ToolSchema
from envscaler_core.models.trajectory import Trajectory

MESSAGE_KEYS = {
    "system": {"role", "content"},
    "user": {"role", "content"},
    "assistant": {"role", "content", "tool_calls", "reasoning_content"},  # reasoning: read by HF templates only
    "tool": {"role", "content", "tool_call_id"},
}


CALL_KEYS = {"id", "type", "function"}
OPENAI_ONLY_DROPS = {"reasoning_content"}
"""Kept for chat templates (Qwen3 renders it) but not part of OpenAI's fine-tuning message format."""


def _call_problem(call: Any, where: str) -> str | None:
    if not isinstance(call, dict) or not isinstance(call.get("id"), str) or not call["id"]:
        return f"{where}: tool call without an id"
    fn = call.get("function")
    if call.get("type") != "function" or not isinstance(fn, dict) or not isinstance(fn.get("name"), str) or not fn["name"]:
        return f"{where}: tool call {call['id']} is not a named function call"
    raw = fn.get("arguments")
    if not isinstance(raw, str):
        return f"{where}: tool call {call['id']} arguments are not a JSON string"
    try:
        args = json.loads(raw)
    except json.JSONDecodeError:
        return f"{where}: tool call {call['id']} arguments are not valid JSON"
    if not isinstance(args, dict):
        return f"{where}: tool call {call['id']} arguments are not a JSON object"
    return None


def protocol_problems(messages: list[dict[str, Any]]) -> list[str]:
    """Why `messages` is not a well-formed OpenAI tool-use conversation (empty = it is).

    Rules: known roles with string content (assistant may have null content when it calls tools);
    tool calls carry an id, a function name and JSON-object arguments as a string; every tool message
    answers a call of the assistant message before it, each call exactly once, before the next turn.
    """
    problems: list[str] = []
    pending: list[str] = []
    for i, msg in enumerate(messages):
        where = f"message {i}"
        role = msg.get("role") if isinstance(msg, dict) else None
        if role not in MESSAGE_KEYS:
            problems.append(f"{where}: unknown role {role!r}")
            continue
        if role != "tool" and pending:
            problems.append(f"{where}: tool call(s) {pending} never answered")
            pending = []
        content = msg.get("content")
        if not (isinstance(content, str) or (role == "assistant" and content is None and msg.get("tool_calls"))):
            problems.append(f"{where}: {role} content must be a string")
        if role == "assistant":
            calls = msg.get("tool_calls") or []
            for call in calls:
                problem = _call_problem(call, where)
                if problem:
                    problems.append(problem)
                else:
                    pending.append(call["id"])
        elif role == "tool":
            call_id = msg.get("tool_call_id")
            if call_id not in pending:
                problems.append(f"{where}: tool_call_id {call_id!r} answers no pending call")
            else:
                pending.remove(call_id)
    if pending:
        problems.append(f"end: tool call(s) {pending} never answered")
    return problems


def clean_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Only the keys OpenAI-format consumers know, per role (drops internal extras)."""
    out = []
    for msg in messages:
        allowed = MESSAGE_KEYS.get(msg.get("role"), set())
        kept = {k: v for k, v in msg.items() if k in allowed and not (k == "reasoning_content" and not v)}
        if isinstance(kept.get("tool_calls"), list):  # a provider's extras on a call (Gemini's signature)
            kept["tool_calls"] = [{k: v for k, v in c.items() if k in CALL_KEYS} if isinstance(c, dict) else c
                                  for c in kept["tool_calls"]]
        out.append(kept)
    return out


def exported_tools(tools: list[ToolSchema]) -> list[dict[str, Any]]:
    """Tool schemas with every list `type` (`["string", "null"]`) written as `anyOf`: the same meaning,
    but `datasets` before 4.7 infers one Arrow type per JSON path across rows and refused a file where
    one tool types a parameter with a list and another with a string (outside check, 2026-11-26). Used
    by the SFT files and envs.jsonl; RL rows keep the env's own schemas."""
    out = []
    for tool in tools:
        dumped = tool.model_dump(mode="json")
        fn = dumped.get("function")
        if isinstance(fn, dict) and isinstance(fn.get("parameters"), dict):
            dumped = {**dumped, "function": {**fn, "parameters": portable_schema(fn["parameters"])}}
        out.append(dumped)
    return out


def sft_messages(fingerprint: str, traj: Trajectory) -> list[dict[str, Any]]:
    """The trajectory's messages with OpenAI/Hugging Face keys only and template-safe call ids."""
    return with_template_safe_ids(fingerprint, clean_messages(traj.messages))


def sft_line(fingerprint: str, traj: Trajectory) -> dict[str, Any]:
    """One line of OpenAI's chat fine-tuning format: `messages` and `tools`, nothing else."""
    messages = [{k: v for k, v in m.items() if k not in OPENAI_ONLY_DROPS} for m in sft_messages(fingerprint, traj)]
    return {"messages": messages, "tools": exported_tools(row_tools(traj))}


def sft_meta_line(line: int, fingerprint: str, traj: Trajectory) -> dict[str, Any]:
    """Provenance of line `line` (1-based) of sft_messages.jsonl, kept out of that file because OpenAI's
    format documents no other top-level keys."""
    return {"line": line, "id": fingerprint, "env_id": traj.env_id, "scenario_fp": traj.scenario_fp,
            "mode": traj.mode, "reward": traj.reward}
