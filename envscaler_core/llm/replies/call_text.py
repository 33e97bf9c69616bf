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


def make_call(name: str, arguments: Any, offered: Offered, call_id: str | None = None) -> dict[str, Any]:
    name = name.strip()
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


def json_items(value: Any, offered: Offered, *, need_arguments: bool = False) -> list[dict[str, Any]]:
    """`{"name", "arguments"|"parameters"}` objects (alone or listed) as calls, or Unread."""
    items = value if isinstance(value, list) else [value]
    if not items or not all(isinstance(v, dict) and set(v) <= CALL_KEYS and "name" in v for v in items):
        raise Unread("not call objects")
    if need_arguments and not all("arguments" in v or "parameters" in v for v in items):
        raise Unread("not call objects")
    return [make_call(str(v["name"]), v.get("arguments", v.get("parameters")), offered) for v in items]


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
