"""An assistant turn in one strict OpenAI shape, whatever the endpoint sent.

Accepted, because each has exactly one meaning:
- reasoning in `reasoning_content`/`reasoning` or `<think>` blocks in `content`: moved to
  `reasoning_content` (kept in the trajectory, never shown to the env or the user simulator);
- text beside tool calls (kept as `content`), `content` as "" or None or a list of text parts;
- any tool-call id format (`call_0`, `toolu_…`, 9-char alphanumerics); a missing or repeated id gets
  a fresh one; a missing `type` is "function";
- arguments as a JSON string (compact, pretty-printed or padded with whitespace), as an object, as
  "" / null for a tool without parameters, JSON with trailing commas or comments, or double-encoded;
- the legacy `function_call` field, and tool calls written as text when the server ran no tool
  parser (only for tools that were offered): `<tool_call>{"name": …, "arguments": …}</tool_call>`
  blocks (Hermes, Qwen), a content that is nothing but `{"name": …, "parameters": …}` objects (Llama),
  optionally after `[TOOL_CALLS]` (Mistral) or `<|python_tag|>` (Llama 3.1+), and gpt-oss harmony
  `to=functions.<tool>` messages;
- a `refusal` with no content becomes the content (the turn is still a turn).
Arguments that cannot be read stay as the model wrote them: running the call then reports the precise
problem to the model as an observation, which is what a real env does.
"""

from __future__ import annotations

import json
import re
from typing import Any

from envscaler_core.llm.replies.json_text import NotJSON, load_value
from envscaler_core.llm.replies.json_text import fences
from envscaler_core.llm.replies.reasoning import (
    content_text, harmony_messages, reasoning_field, split_reasoning, without_end_tokens,
)
from envscaler_core.llm.replies.structured import ReplyProblem, shown
from envscaler_core.models.plain_json import plain_json_problem

_TOOL_CALL_TAG = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", re.DOTALL | re.IGNORECASE)


def parse_arguments(raw: Any) -> dict[str, Any]:
    """A tool call's arguments as a dict; ReplyProblem says precisely why not."""
    if raw is None:
        return {}
    if isinstance(raw, dict):
        return checked_arguments(raw)
    if not isinstance(raw, str):
        raise ReplyProblem(f"arguments must be a JSON object, found {shown(raw)}")
    text = without_end_tokens(raw).strip()  # gpt-oss servers leave `<|call|>` after the arguments
    if not text or text == "null":
        return {}
    try:
        value = load_value(text)
    except NotJSON as exc:
        raise ReplyProblem(f"arguments are not valid JSON: {exc}") from None
    if not isinstance(value, dict):
        raise ReplyProblem(f"arguments must be a JSON object, found {shown(value)}")
    return checked_arguments(value)


def checked_arguments(value: dict[str, Any]) -> dict[str, Any]:
    """Parsed arguments that every later step can carry (`models.plain_json`); Python's NaN is kept,
    as the sandbox's wire and the agent's transcript both carry it."""
    problem = plain_json_problem(value, allow_nan=True)
    if problem:
        raise ReplyProblem(f"the arguments are {problem}" if problem.startswith("nested") else f"the arguments {problem}")
    return value


def canonical_arguments(raw: Any) -> str:
    """Compact JSON text of readable arguments; unreadable ones unchanged (as text)."""
    try:
        return json.dumps(parse_arguments(raw), ensure_ascii=False)
    except ReplyProblem:
        if isinstance(raw, str):
            return raw
        try:
            return json.dumps(raw, default=str)
        except (RecursionError, ValueError):
            return "(arguments nested too deeply to serialise)"  # not JSON: running the call says so


def _raw_calls(message: dict[str, Any]) -> list[dict[str, Any]]:
    calls = message.get("tool_calls")
    if isinstance(calls, dict):
        calls = [calls]
    out = [c for c in calls or [] if isinstance(c, dict)]
    legacy = message.get("function_call")
    if not out and isinstance(legacy, dict) and legacy.get("name"):
        out = [{"type": "function", "function": legacy}]
    return out


def _calls_in_text(text: str, offered: set[str]) -> tuple[list[dict[str, Any]], str]:
    """Hermes/Qwen-style `<tool_call>` blocks naming offered tools, and the text without them."""
    found = []
    for match in _TOOL_CALL_TAG.finditer(text):
        try:
            value = load_value(match.group(1))
        except NotJSON:
            return [], text
        if not isinstance(value, dict) or value.get("name") not in offered:
            return [], text
        found.append({"type": "function", "function": {"name": value["name"],
                                                       "arguments": value.get("arguments", value.get("parameters"))}})
    return found, _TOOL_CALL_TAG.sub("", text).strip()


_CALL_KEYS = {"name", "arguments", "parameters", "type", "id"}


def _calls_as_json(text: str, offered: set[str]) -> list[dict[str, Any]]:
    """The whole content (or its one fenced block) as JSON tool calls: `{"name", "arguments"}` or
    `{"name", "parameters"}` (Llama's spelling), alone or in a list, optionally after Mistral's
    `[TOOL_CALLS]` or Llama's `<|python_tag|>`; only when every object names an offered tool and has no other keys."""
    body = text.strip().removeprefix("[TOOL_CALLS]").removeprefix("<|python_tag|>").strip()
    blocks = fences(body)
    if len(blocks) == 1 and body.startswith(("```", "~~~")):
        body = blocks[0].body.strip()
    if not body.startswith(("{", "[")):
        return []
    try:
        value = load_value(body)
    except NotJSON:
        return []
    items = value if isinstance(value, list) else [value]
    if not items or not all(isinstance(v, dict) and v.get("name") in offered and set(v) <= _CALL_KEYS for v in items):
        return []
    return [{"type": "function", "function": {"name": v["name"], "arguments": v.get("arguments", v.get("parameters"))}}
            for v in items]


def _harmony_calls(raw: Any, offered: set[str]) -> list[dict[str, Any]]:
    """gpt-oss commentary messages addressed `to=functions.<tool>`, from unparsed harmony text."""
    text = content_text(raw)
    found = []
    for _, header, body in harmony_messages(text):
        target = re.search(r"to=functions\.([\w.-]+)", header)
        if target and target.group(1) in offered:
            found.append({"type": "function", "function": {"name": target.group(1), "arguments": body}})
    return found


def _call(raw: dict[str, Any], fallback_id: str) -> dict[str, Any]:
    fn = raw.get("function") if isinstance(raw.get("function"), dict) else {}
    name = str(fn.get("name") or raw.get("name") or "").strip()
    arguments = fn["arguments"] if "arguments" in fn else raw.get("arguments", fn.get("parameters"))
    call_id = raw.get("id")
    call_id = str(call_id).strip() if call_id not in (None, "") else fallback_id
    out = {"id": call_id or fallback_id, "type": "function",
           "function": {"name": name, "arguments": canonical_arguments(arguments)}}
    if isinstance(raw.get("extra_content"), dict):
        # Gemini's thought signature rides here and must come back with the call on the next request
        # (HTTP 400 "Function call is missing a thought_signature" otherwise); exports leave it out
        out["extra_content"] = raw["extra_content"]
    return out


def normalise_assistant(message: dict[str, Any], tools: list[dict[str, Any]] | None = None,
                        turn: int = 0) -> dict[str, Any]:
    """The assistant turn as `{role, content, tool_calls?, reasoning_content?}` (see module docstring)."""
    split = split_reasoning(message.get("content"), reasoning_field(message))
    content = split.answer
    raw_calls = _raw_calls(message)
    if not raw_calls and tools:
        offered = {str((t.get("function") or {}).get("name")) for t in tools if isinstance(t, dict)}
        if "<|channel|>" in content_text(message.get("content")):
            raw_calls = _harmony_calls(message.get("content"), offered)
        elif "<tool_call>" in content.lower():
            raw_calls, content = _calls_in_text(content, offered)
        elif split.tail is not None and "<tool_call>" in split.tail.lower():  # calls after reasoning never closed
            raw_calls, _ = _calls_in_text(split.tail, offered)
        elif (json_calls := _calls_as_json(content, offered)):
            raw_calls, content = json_calls, ""
    if not content and not raw_calls and split.tail is not None:
        content = ""  # reasoning never closed and nothing after it: an empty turn, not the reasoning
    if not content and isinstance(message.get("refusal"), str) and message["refusal"].strip():
        content = message["refusal"].strip()
    out: dict[str, Any] = {"role": "assistant", "content": content if content or not raw_calls else None}
    if raw_calls:
        calls, used = [], set()
        for i, raw in enumerate(raw_calls):
            call = _call(raw, f"call_{turn}_{i}")
            if call["id"] in used:
                call["id"] = f"{call['id']}_{i}"
            used.add(call["id"])
            calls.append(call)
        out["tool_calls"] = calls
    if split.reasoning:
        out["reasoning_content"] = split.reasoning
    return out


def answer_text(message: dict[str, Any]) -> str:
    """What a chat turn *says* (reasoning removed): for the simulated user and done/stop markers."""
    return split_reasoning(content_text(message.get("content")), None).answer
