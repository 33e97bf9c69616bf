"""Tool schemas in the one JSON Schema form every OpenAI-compatible server takes.

The factory's schemas (and EnvScaler's imported ones) say "a string or null" as a list `type`,
`{"type": ["string", "null"]}`: valid JSON Schema, read by our validation and the gym as such, but
Gemini's OpenAI endpoint maps `type` onto a single proto field and refuses the whole request
("Proto field is not repeating, cannot start list"). The same meaning as `anyOf` branches of one type
each (`{"anyOf": [{"type": "string"}, {"type": "null"}]}`) is accepted by OpenAI, Gemini, vLLM,
SGLang and Anthropic's compatibility layer alike. Only what is sent is rewritten: the stored schema,
the cache key and every check keep the list form.
"""

from __future__ import annotations

from typing import Any

_KEPT_OUTSIDE = ("description", "title", "default")
_SUBSCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions")
_SUBSCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_SUBSCHEMA_ONES = ("items", "additionalProperties", "not", "contains")


def sent_tools(tools: list[dict[str, Any]] | None) -> list[dict[str, Any]] | None:
    """`tools` with every list `type` in their parameters written as `anyOf`; the same list object
    when there is none (the common case costs one walk, no copy)."""
    if not tools or not any(_has_list_type(t) for t in tools):
        return tools
    return [_tool(t) for t in tools]


def _tool(tool: Any) -> Any:
    fn = tool.get("function") if isinstance(tool, dict) else None
    if not isinstance(fn, dict) or not isinstance(fn.get("parameters"), dict):
        return tool
    return {**tool, "function": {**fn, "parameters": portable_schema(fn["parameters"])}}


def _has_list_type(value: Any) -> bool:
    if isinstance(value, dict):
        return isinstance(value.get("type"), list) or any(_has_list_type(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_list_type(v) for v in value)
    return False


def portable_schema(schema: Any) -> Any:
    """`schema` with each list `type` (at any depth) as `anyOf` branches of one type each. An `enum`
    goes to the branches its values fit (None to the null branch); the other keywords of a
    multi-type schema (`items`, `properties`, bounds) go to the branch of the type they constrain;
    a description stays outside."""
    if not isinstance(schema, dict):
        return schema
    out = {k: _inner(k, v) for k, v in schema.items()}
    types = out.get("type")
    if not isinstance(types, list):
        return out
    kinds = [t for t in dict.fromkeys(types) if isinstance(t, str)]
    if len(kinds) == 1:
        return {**out, "type": kinds[0]}
    outside = {k: out[k] for k in _KEPT_OUTSIDE if k in out}
    rest = {k: v for k, v in out.items() if k not in (*_KEPT_OUTSIDE, "type")}
    branches = [_narrowed({"type": kind, **_for_kind(kind, rest)}) for kind in kinds]
    kept = [b for b in branches if b is not None]
    if len(kept) == 1:
        return {**outside, **kept[0]}
    return {**outside, "anyOf": kept or [{"type": kind} for kind in kinds]}


def _inner(key: str, value: Any) -> Any:
    if key in _SUBSCHEMA_MAPS and isinstance(value, dict):
        return {name: portable_schema(sub) for name, sub in value.items()}
    if key in _SUBSCHEMA_LISTS and isinstance(value, list):
        return [portable_schema(sub) for sub in value]
    if key in _SUBSCHEMA_ONES:
        return portable_schema(value)
    return value


_KEYWORDS_OF = {
    "array": ("items", "prefixItems", "minItems", "maxItems", "uniqueItems", "contains"),
    "object": ("properties", "required", "additionalProperties", "patternProperties", "minProperties",
               "maxProperties"),
    "string": ("minLength", "maxLength", "pattern", "format"),
    "number": ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"),
    "integer": ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"),
}
_ANY_KIND = {k for keys in _KEYWORDS_OF.values() for k in keys}


def _for_kind(kind: str, rest: dict[str, Any]) -> dict[str, Any]:
    """The keywords of a multi-type schema that apply to `kind` (type-specific ones only to their type)."""
    own = _KEYWORDS_OF.get(kind, ())
    return {k: v for k, v in rest.items() if k not in _ANY_KIND or k in own}


_PYTHON_TYPE: dict[str, type | tuple[type, ...]] = {"string": str, "array": list, "object": dict, "boolean": bool,
                                                   "integer": int, "number": (int, float)}


def _fits(kind: str, value: Any) -> bool:
    if kind == "null":
        return value is None
    if isinstance(value, bool) and kind != "boolean":
        return False
    return kind in _PYTHON_TYPE and isinstance(value, _PYTHON_TYPE[kind])


def _narrowed(branch: dict[str, Any]) -> dict[str, Any] | None:
    """A one-type branch with its `enum` cut to the values of that type (none left for a null branch
    that the enum allows); None when the enum allows no value of that type (the branch admits nothing)."""
    if not isinstance(branch.get("enum"), list):
        return branch
    values = [v for v in branch["enum"] if _fits(branch["type"], v)]
    if not values:
        return None
    if branch["type"] == "null":
        return {k: v for k, v in branch.items() if k != "enum"}
    return {**branch, "enum": values}
