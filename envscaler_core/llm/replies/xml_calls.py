"""Tool-call dialects written as XML-like tags (see `text_calls` for the rules every reader follows).
Parameter values there are raw text; they are typed by the offered tool's JSON schema."""

from __future__ import annotations

import json
import re
from typing import Any

from envscaler_core.llm.replies.call_text import (
    Found, Offered, Unread, json_items, json_object, make_call, prose_of,
)
from envscaler_core.llm.replies.json_text import NotJSON, balanced_end, load_value


def _types(schema: Any) -> set[str]:
    if not isinstance(schema, dict):
        return set()
    kind = schema.get("type")
    found = {kind} if isinstance(kind, str) else {k for k in kind or [] if isinstance(k, str)}
    for key in ("anyOf", "oneOf"):
        for sub in schema.get(key) or []:
            found |= _types(sub)
    return found


_FITS = {"integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
         "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
         "boolean": lambda v: isinstance(v, bool), "object": lambda v: isinstance(v, dict),
         "array": lambda v: isinstance(v, list), "null": lambda v: v is None}


def typed_value(raw: str, schema: Any) -> Any:
    """A raw XML parameter value per the offered tool's schema: JSON when the schema's type is
    integer/number/boolean/object/array/null and the value is one of those; else the text as written
    (a string parameter, or a value the env should report as the wrong type)."""
    kinds = _types(schema) - {"string"}
    if not kinds:
        return raw
    try:
        value = json.loads(raw.strip())
    except ValueError:
        return raw
    return value if any(_FITS.get(k, lambda v: False)(value) for k in kinds) else raw


def _loose_value(raw: str, schema: Any) -> Any:
    """GLM's rule: JSON when it parses and the schema does not say string, else the text."""
    if "string" in _types(schema):
        return raw
    try:
        return json.loads(raw.strip())
    except ValueError:
        return raw


def _trim(value: str) -> str:
    """One newline after the opening tag and one before the closing tag are layout, not value."""
    return value.removeprefix("\n").removesuffix("\n")


def _schema(offered: Offered, name: str, param: str) -> Any:
    return ((offered.get(name.strip()) or {}).get("properties") or {}).get(param)


_PARAM = re.compile(r"<parameter=([^>\n]+)>(.*?)(?:</parameter>|(?=<parameter=)|\Z)", re.DOTALL)
_FUNCTION = re.compile(r"(?:<(?:seed:)?tool_call>\s*)?<function=([^>\n]+)>(.*?)(?:</function>|(?=<function=)|\Z)"
                       r"(?:\s*</(?:seed:)?tool_call>)?", re.DOTALL)


def _xml_parameters(name: str, body: str, offered: Offered) -> dict[str, Any]:
    if body.strip().startswith("{"):  # Llama 3.1 / Functionary v3.1 `<function=name>{…}</function>`
        return json_object(body)
    if _PARAM.sub("", body).strip():
        raise Unread("text between the parameters")
    return {p.strip(): typed_value(_trim(v), _schema(offered, name, p.strip())) for p, v in _PARAM.findall(body)}


def function_tags(text: str, offered: Offered) -> Found:
    """`<function=name>` blocks: Qwen3-Coder (vLLM `qwen3_coder`/`qwen3_xml`) `<tool_call><function=name>
    <parameter=p>value</parameter></function></tool_call>`, ByteDance Seed-OSS (`seed_oss`) the same
    inside `<seed:tool_call>`, Llama 3.1 / Functionary v3.1 `<function=name>{…}</function>`. Values
    are raw text, typed by the offered tool's schema (`typed_value`)."""
    units = list(_FUNCTION.finditer(text))
    calls = [make_call(m.group(1), _xml_parameters(m.group(1), m.group(2), offered), offered) for m in units]
    rest = _FUNCTION.sub("\n", text)
    return Found(calls, prose_of(rest), bool(text[units[-1].end():].strip()))


_INVOKE = re.compile(r'<invoke\s+name="([^"]+)"\s*>(.*?)</invoke>', re.DOTALL)
_NAMED_PARAM = re.compile(r'<parameter\s+name="([^"]+)"\s*>(.*?)</parameter>', re.DOTALL)
_MINIMAX = re.compile(r"<minimax:tool_call>(.*?)(?:</minimax:tool_call>|\Z)", re.DOTALL)


def minimax(text: str, offered: Offered) -> Found:
    """MiniMax-M2 (vLLM `minimax_m2` parser off): `<minimax:tool_call><invoke name="x"><parameter
    name="p">v</parameter></invoke></minimax:tool_call>`; values typed like Qwen3-Coder's."""
    calls = []
    for block in _MINIMAX.finditer(text):
        if _INVOKE.sub("", block.group(1)).strip():
            raise Unread("text between the invokes")
        for name, body in _INVOKE.findall(block.group(1)):
            if _NAMED_PARAM.sub("", body).strip():
                raise Unread("text between the parameters")
            args = {p: typed_value(_trim(v), _schema(offered, name, p)) for p, v in _NAMED_PARAM.findall(body)}
            calls.append(make_call(name, args, offered))
    last = list(_MINIMAX.finditer(text))[-1]
    return Found(calls, prose_of(_MINIMAX.sub("\n", text)), bool(text[last.end():].strip()))


_TOOL_CALL = re.compile(r"<tool_call>(.*?)(?:</tool_call>|(?=<tool_call>)|\Z)", re.DOTALL | re.IGNORECASE)
_GLM = re.compile(r"\A\s*([\w.\-]+)\s*(?=<arg_key>|\Z)")
# a key holds no tag, and a value ends at the next key: each try stops at the next pair, so a reply with
# thousands of unclosed pairs is not scanned to its end once per pair
_GLM_ARG = re.compile(r"<arg_key>([^<]*)</arg_key>\s*<arg_value>((?:(?!</arg_value>|<arg_key>).)*)</arg_value>",
                      re.DOTALL)


def tool_call_tags(text: str, offered: Offered) -> Found:
    """`<tool_call>` blocks: Hermes / Qwen2.5 / Qwen3 (vLLM `hermes`) `<tool_call>{"name", "arguments"}
    </tool_call>`, also when the closing tag never came; GLM-4.5/4.6 (`glm45`) `<tool_call>name
    <arg_key>k</arg_key><arg_value>v</arg_value></tool_call>` (values: `_loose_value`)."""
    calls = []
    units = list(_TOOL_CALL.finditer(text))
    for unit in units:
        inner = unit.group(1).strip()
        if inner.startswith("{"):
            end = balanced_end(inner, 0)
            if end is None or inner[end:].strip():
                raise Unread("a <tool_call> block that is not one JSON object")
            try:
                value = load_value(inner[:end])
            except NotJSON as exc:
                raise Unread(str(exc)) from None
            calls += json_items(value, offered)
        elif (glm := _GLM.match(inner)) is not None and not _GLM_ARG.sub("", inner[glm.end():]).strip():
            name = glm.group(1)
            calls.append(make_call(name, {k.strip(): _loose_value(v, _schema(offered, name, k.strip()))
                                      for k, v in _GLM_ARG.findall(inner[glm.end():])}, offered))
        else:
            raise Unread("an unknown <tool_call> body")
    return Found(calls, prose_of(_TOOL_CALL.sub("\n", text)), bool(text[units[-1].end():].strip()))
