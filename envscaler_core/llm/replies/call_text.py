"""What every reader of tool calls written as text shares (`text_calls`, `xml_calls`): the offered
tools, a read call, the JSON call objects families write, and `Unread` for text that stays text."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from envscaler_core.llm.replies.json_text import NotJSON, balanced_end, load_value

Offered = dict[str, dict[str, Any]]  # tool name -> its parameters' JSON schema ({} when none given)


@dataclass(frozen=True)
class Found:
    """Calls read from a text: `prose` is the rest of the text (the turn's content), `trailing`
    whether any of that prose comes after the last call."""

    calls: list[dict[str, Any]]
    prose: str
    trailing: bool = False


class Unread(ValueError):
    """The dialect's markers are there but the calls cannot be read exactly: the text stays text."""


def offered_tools(tools: list[dict[str, Any]] | None) -> Offered:
    """The offered tools' names and parameter schemas."""
    out: Offered = {}
    for tool in tools or []:
        fn = (tool.get("function") if isinstance(tool, dict) else None) or {}
        if isinstance(fn, dict) and fn.get("name"):
            out[str(fn["name"])] = fn.get("parameters") if isinstance(fn.get("parameters"), dict) else {}
    return out


def tool_name(name: str, offered: Offered) -> str:
    """The offered tool a name means: gpt-oss (harmony) servers send `functions.X`, some vLLM versions
    `X<|channel|>commentary` (any `<|…|>` suffix). Renamed only when `X` is offered and the name as sent
    is not; otherwise the name stays as sent (and the env reports an unknown tool)."""
    if not offered or name in offered:
        return name
    bare = name.split("<|", 1)[0].strip()
    for candidate in (bare, bare.removeprefix("functions."), re.sub(r":\d+\Z", "", bare.removeprefix("functions."))):
        if candidate in offered:
            return candidate
    return name


def make_call(name: str, arguments: Any, offered: Offered, call_id: str | None = None) -> dict[str, Any]:
    name = tool_name(name.strip(), offered)
    if name not in offered:
        raise Unread(f"{name!r} is not an offered tool")
    if isinstance(arguments, str):
        arguments = json_object(arguments)
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        raise Unread("arguments are not an object")
    call: dict[str, Any] = {"type": "function", "function": {"name": name, "arguments": arguments}}
    if call_id:
        call["id"] = call_id
    return call


def json_object(text: str) -> dict[str, Any]:
    text = text.strip()
    if not text or text == "null":
        return {}
    try:
        value = load_value(text)
    except NotJSON as exc:
        raise Unread(str(exc)) from None
    if not isinstance(value, dict):
        raise Unread("arguments are not an object")
    return value


def prose_of(*parts: str) -> str:
    return "\n\n".join(p.strip() for p in parts if p and p.strip())


CALL_KEYS = {"name", "arguments", "parameters", "type", "id"}
_OPENAI_KEYS = {"id", "type", "function", "index"}


def _flat_item(value: Any) -> Any:
    """An OpenAI-shaped call object (`{"id", "type": "function", "function": {"name", "arguments"}}`, what
    a model trained on the API's own format writes when a server leaves it in `content`) as the flat
    `{"name", "arguments", "id"}` object; anything else unchanged."""
    if not (isinstance(value, dict) and isinstance(value.get("function"), dict) and set(value) <= _OPENAI_KEYS
            and value.get("type", "function") == "function"):
        return value
    fn = value["function"]
    if not (set(fn) <= {"name", "arguments", "parameters"} and "name" in fn):
        return value
    flat = {k: v for k, v in fn.items()}
    if isinstance(value.get("id"), str) and value["id"]:
        flat["id"] = value["id"]
    return flat


def json_items(value: Any, offered: Offered, *, need_arguments: bool = False) -> list[dict[str, Any]]:
    """`{"name", "arguments"|"parameters"}` objects or OpenAI-shaped call objects, alone, listed, or
    listed under `{"tool_calls": [...]}` (the message field written into the text), as calls, or Unread."""
    if isinstance(value, dict) and set(value) - {"role", "content"} == {"tool_calls"} and not value.get("content"):
        value = value["tool_calls"]
    items = [_flat_item(v) for v in (value if isinstance(value, list) else [value])]
    if not items or not all(isinstance(v, dict) and set(v) <= CALL_KEYS and "name" in v for v in items):
        raise Unread("not call objects")
    if need_arguments and not all("arguments" in v or "parameters" in v for v in items):
        raise Unread("not call objects")
    return [make_call(str(v["name"]), v.get("arguments", v.get("parameters")), offered,
                      v["id"] if isinstance(v.get("id"), str) else None) for v in items]


def json_run(text: str, start: int) -> tuple[list[Any], int]:
    """The JSON values written one after another from `start` (separated by blanks, `,` or `;`)."""
    values, i = [], start
    while True:
        while i < len(text) and text[i] in " \t\r\n,;":
            i += 1
        if i >= len(text) or text[i] not in "{[":
            break
        end = balanced_end(text, i)
        if end is None:
            raise Unread("a JSON value never closes")
        try:
            values.append(load_value(text[i:end]))
        except NotJSON as exc:
            raise Unread(str(exc)) from None
        i = end
    if not values:
        raise Unread("no JSON after the marker")
    return values, i


def after_prefix(text: str, prefix: str, offered: Offered) -> Found:
    """Prose, then `prefix` (a regex), then JSON call objects or lists of them, then optional prose."""
    at = re.search(prefix, text)
    if at is None:
        raise Unread("no marker")
    values, end = json_run(text, at.end())
    calls = [c for v in values for c in json_items(v, offered)]
    return Found(calls, prose_of(text[:at.start()], text[end:]), bool(text[end:].strip()))
