"""LlamaFactory's sharegpt format with tools, and the `dataset_info.json` entry that registers it.

LlamaFactory wants strict alternation: human/observation turns at odd positions, gpt/function_call
turns at even ones, ending on a model turn; the system prompt and the tool list (a JSON *string*) sit
beside the conversation. OpenAI-format messages map onto that with two documented losses:
parallel tool calls become one `function_call` turn holding a JSON list of calls and one `observation`
turn holding their results joined by newlines, and text an assistant wrote *alongside* tool calls is
dropped (the function_call turn has no room for it). Reasoning content is not exported here.
"""

from __future__ import annotations

import json
from typing import Any

from envscaler_core.export.row_tools import row_tools
from envscaler_core.models.trajectory import Trajectory

USER, MODEL = ("human", "observation"), ("gpt", "function_call")


def _call_value(calls: list[dict[str, Any]]) -> str:
    parsed = [{"name": c["function"]["name"], "arguments": json.loads(c["function"]["arguments"])} for c in calls]
    return json.dumps(parsed[0] if len(parsed) == 1 else parsed, ensure_ascii=False)


def to_sharegpt(messages: list[dict[str, Any]]) -> tuple[str, list[dict[str, str]]]:
    """(system, conversations) from protocol-valid OpenAI messages (see `sft.protocol_problems`)."""
    system = ""
    turns: list[dict[str, str]] = []
    i = 0
    while i < len(messages):
        msg = messages[i]
        role = msg["role"]
        if role == "system":
            system = "\n\n".join(p for p in (system, msg["content"]) if p)
        elif role == "user":
            turns.append({"from": "human", "value": msg["content"]})
        elif role == "assistant" and msg.get("tool_calls"):
            calls = msg["tool_calls"]
            turns.append({"from": "function_call", "value": _call_value(calls)})
            results = []
            while i + 1 < len(messages) and messages[i + 1]["role"] == "tool":
                i += 1
                results.append(messages[i]["content"])
            turns.append({"from": "observation", "value": "\n".join(results)})
        elif role == "assistant":
            turns.append({"from": "gpt", "value": msg.get("content") or ""})
        i += 1
    return system, turns


def alternation_problem(turns: list[dict[str, str]]) -> str | None:
    """LlamaFactory's own acceptance rule, checked before writing so it never drops rows silently."""
    if not turns or len(turns) % 2:
        return f"{len(turns)} turns: a conversation must be user/model pairs ending on a model turn"
    for index, turn in enumerate(turns):
        allowed = USER if index % 2 == 0 else MODEL
        if turn["from"] not in allowed:
            return f"turn {index} is {turn['from']!r}, expected one of {allowed}"
    return None


def llamafactory_line(fingerprint: str, traj: Trajectory) -> tuple[dict[str, Any] | None, str | None]:
    """(row, None) or (None, why it cannot be expressed in LlamaFactory's format)."""
    system, turns = to_sharegpt(traj.messages)
    problem = alternation_problem(turns)
    if problem:
        return None, problem
    tools = [_readable_by_lf(t.function.model_dump(mode="json")) for t in row_tools(traj)]
    row = {"conversations": turns, "system": system, "tools": json.dumps(tools, ensure_ascii=False), "id": fingerprint}
    return row, None


def _readable_by_lf(function: dict[str, Any]) -> dict[str, Any]:
    """A function schema LlamaFactory's default tool formatter can print: it reads each property's `type`,
    `enum` (joined as strings) and `items.type` at the top level, so a nullable property
    (`"type": ["string", "null"]`, an enum holding `null`) made it raise `TypeError` on every row of that env
    and print Python lists as types (outside check, 2026-11-26). Such a property is written with its one
    other type, `null` out of its enum, and "(or null)" in its description; anything else as the env has it."""
    params = function.get("parameters")
    props = params.get("properties") if isinstance(params, dict) else None
    if not isinstance(props, dict):
        return function
    readable = {name: _one_type(prop) if isinstance(prop, dict) else prop for name, prop in props.items()}
    return {**function, "parameters": {**params, "properties": readable}}


def _one_type(prop: dict[str, Any]) -> dict[str, Any]:
    kinds = prop.get("type")
    enum = prop.get("enum")
    nullable = (isinstance(kinds, list) and "null" in kinds) or (isinstance(enum, list) and None in enum)
    if not nullable:
        return prop
    out = dict(prop)
    if isinstance(kinds, list):
        others = [k for k in kinds if k != "null"]
        if len(others) != 1:
            return prop
        out["type"] = others[0]
    if isinstance(enum, list):
        out["enum"] = [e for e in enum if e is not None]
    out["description"] = (str(prop.get("description") or "") + " (or null)").strip()
    return out


def dataset_info(name: str, file_name: str) -> dict[str, Any]:
    """The entry to merge into LlamaFactory's `data/dataset_info.json` (default sharegpt tags spelled
    out, so nothing depends on LlamaFactory's defaults staying the same)."""
    return {
        name: {
            "file_name": file_name,
            "formatting": "sharegpt",
            "columns": {"messages": "conversations", "system": "system", "tools": "tools"},
            "tags": {
                "role_tag": "from", "content_tag": "value", "user_tag": "human", "assistant_tag": "gpt",
                "observation_tag": "observation", "function_tag": "function_call", "system_tag": "system",
            },
        }
    }
