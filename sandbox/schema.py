"""Host-side tool-call check against OpenAI function schemas, before anything reaches the jail.

A bad call is an observation for the agent (`error_kind="schema"`), so the messages name the tool,
the argument path and what was expected. Only the JSON-Schema subset that tool schemas use is
understood: type (incl. lists of types), enum, const, properties/required/additionalProperties,
items, anyOf/oneOf (oneOf as JSON Schema says: exactly one branch matches). Unknown keywords are
ignored (permissive), never guessed at.

The check's cost is bounded: each (value, schema, path) is checked once per call (nested
`oneOf`/`anyOf` of shared branches checked 2^depth before), messages are cut past
MAX_PROBLEM_CHARS, and a call that still needs more than MAX_CHECK_STEPS steps is refused naming it.
An `enum` is read once per call into a set of type-strict keys (one step per member and per node of a
composite value; a scalar's lookup is part of its step), so membership is one lookup, not a scan of the enum per value; messages show a
bounded repr of values and enums, never the whole of either.
"""

from __future__ import annotations

import reprlib
from typing import Any, Iterator, NamedTuple

from envscaler_core.wire_values import value_problem

_TYPE_NAMES = ("null", "boolean", "integer", "number", "string", "array", "object")


MAX_CHECK_STEPS = 200_000
"""Schema checks one call may make (a step is one value against one schema node): a call of 10,000
records of 10 fields takes about 110,000."""

MAX_PROBLEM_CHARS = 400
"""A problem naming the failed branches of nested unions grows per level; past this its middle is cut."""


_SHORT = reprlib.Repr()
_SHORT.maxstring = 60
_SHORT.maxother = 60
_SHORT.maxlist = _SHORT.maxtuple = _SHORT.maxdict = _SHORT.maxset = 5
_SHORT.maxlevel = 3


def _short(value: Any) -> str:
    """A repr whose cost and length do not grow with the value (reprlib stops at its limits)."""
    return _SHORT.repr(value)


_END = object()


class _Member(NamedTuple):
    """One name and value of an object whose key is being built."""

    name: str
    value: Any


def _scalar_key(value: Any) -> Any:
    """Integers enter a membership set as their bytes: equal exactly when the values are, and hashed by
    the process's randomised bytes hash, so which of them share a bucket is unknown to whoever wrote the
    enum (an int's own hash is its value modulo 2^61-1, which anyone can aim: red team 7, F1; a salt
    XORed into the value still left structured values colliding now and then). At most 64 bits wide
    (`wire_values`); the length follows the value, so a wider one is keyed exactly too."""
    if type(value) is int:
        return ("integer", value.to_bytes(value.bit_length() // 8 + 1, "little", signed=True))
    try:
        hash(value)
    except TypeError:  # not a JSON value: equal to nothing but itself
        return ("other", id(value))
    return (json_type(value), value)


class _TooCostly(Exception):
    """The call needs more than MAX_CHECK_STEPS steps to check."""


class ToolSpecError(ValueError):
    """The tool list itself is malformed (a caller bug, not an agent mistake)."""


def json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def _matches(value: Any, type_name: str) -> bool:
    actual = json_type(value)
    if type_name == "number":
        return actual in ("integer", "number")
    if type_name == "integer" and actual == "number":
        return float(value).is_integer()
    return actual == type_name


def private_name_problem(tool: str) -> str | None:
    if not isinstance(tool, str) or not tool:
        return "the tool name must be a non-empty string"
    if tool.startswith("__"):
        return f"{_short(tool)} is a dunder name; only public methods are tools"
    if tool.startswith("_"):
        return f"{_short(tool)} is private; only public methods are tools"
    return None


def index_tools(tools: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """name -> parameters schema; raises ToolSpecError naming the bad entry."""
    index: dict[str, dict[str, Any]] = {}
    for i, tool in enumerate(tools):
        fn = tool.get("function") if isinstance(tool, dict) else None
        name = fn.get("name") if isinstance(fn, dict) else None
        if not isinstance(name, str) or not name:
            raise ToolSpecError(f"tools[{i}] is not an OpenAI function schema (no function.name)")
        params = fn.get("parameters") or {"type": "object", "properties": {}}
        if not isinstance(params, dict):
            raise ToolSpecError(f"tools[{i}] ({name}): parameters must be a JSON schema object")
        problem = value_problem(params, f"tools[{i}] ({name}).parameters")
        if problem:  # enum/const/bounds wider than 64 bits: the wire could never carry a matching value
            raise ToolSpecError(problem)
        index[name] = params
    return index


def _cut(problem: str) -> str:
    """Past MAX_PROBLEM_CHARS the middle goes: the head names the argument, the tail the innermost cause."""
    if len(problem) <= MAX_PROBLEM_CHARS:
        return problem
    head = MAX_PROBLEM_CHARS // 3
    return f"{problem[:head]} ... {problem[-(MAX_PROBLEM_CHARS - head - 5):]}"


class _Checker:
    """One call's check: remembers each (value, schema, path) it has decided and counts its steps."""

    def __init__(self) -> None:
        self.steps = 0
        self.decided: dict[tuple[int, int, str], str | None] = {}
        self.enums: dict[tuple[int, str], frozenset[Any]] = {}  # (id(schema), enum|const) -> members' keys
        self.value_keys: dict[int, Any] = {}  # id(value) -> its key, for values checked against several enums

    def _charge(self, steps: int = 1) -> None:
        self.steps += steps
        if self.steps > MAX_CHECK_STEPS:
            raise _TooCostly

    def _key(self, value: Any) -> Any:
        """A hashable key equal for two JSON values exactly when they are equal with their JSON types
        (1, 1.0 and True differ, at every level); one step per node, built without recursion so a deep
        value cannot overflow the host's stack. A scalar's key is free: it is part of its check's step."""
        if not isinstance(value, (list, dict)):
            return _scalar_key(value)
        root: list[Any] = []
        stack: list[tuple[str, Iterator[Any], list[Any]]] = [("root", iter((value,)), root)]
        while stack:
            kind, pending, parts = stack[-1]
            item = next(pending, _END)
            if item is _END:
                stack.pop()
                if stack:
                    stack[-1][2].append((kind, frozenset(parts) if kind == "object" else tuple(parts)))
                continue
            self._charge()
            if isinstance(item, list):
                stack.append(("array", iter(item), []))
            elif isinstance(item, dict):
                stack.append(("object", iter([_Member(k, v) for k, v in item.items()]), []))
            elif isinstance(item, _Member):
                stack.append(("member", iter((item.value,)), [item.name]))
            else:
                parts.append(_scalar_key(item))
        return root[0]

    def _allows(self, value: Any, schema: dict[str, Any], word: str) -> bool:
        """Whether `value` is in schema[word] (the enum's members, or the one const)."""
        members = self.enums.get((id(schema), word))
        if members is None:
            listed = schema[word] if word == "enum" else [schema[word]]
            self._charge(len(listed))
            members = frozenset(self._key(e) for e in listed)
            self.enums[(id(schema), word)] = members
        key = self.value_keys.get(id(value))
        if key is None:
            key = self._key(value)
            self.value_keys[id(value)] = key
        return key in members

    def check(self, value: Any, schema: dict[str, Any], path: str) -> str | None:
        if not isinstance(schema, dict):
            return None
        key = (id(value), id(schema), path)  # value and schema live as long as the call's check
        if key not in self.decided:
            self._charge()
            self.decided[key] = self._decide(value, schema, path)
        return self.decided[key]

    def _decide(self, value: Any, schema: dict[str, Any], path: str) -> str | None:
        types = schema.get("type")
        if isinstance(types, str):
            types = [types]
        if isinstance(types, list) and types:
            known = [t for t in types if t in _TYPE_NAMES]
            if known and not any(_matches(value, t) for t in known):
                return f"{path}: expected {' or '.join(known)}, got {json_type(value)}"
        enum = schema.get("enum")
        if isinstance(enum, list) and not self._allows(value, schema, "enum"):
            shown = _short(enum) if len(enum) <= 5 else f"{len(enum):,} values ({_short(enum[:3])[:-1]}, ...])"
            return _cut(f"{path}: {_short(value)} is not one of {shown}")
        if "const" in schema and not self._allows(value, schema, "const"):
            return _cut(f"{path}: must be {_short(schema['const'])}")
        for key in ("anyOf", "oneOf"):
            branches = schema.get(key)
            if isinstance(branches, list) and branches:
                problem = self._union(value, key, branches, path)
                if problem:
                    return problem
        if isinstance(value, dict):
            return self.check_object(value, schema, path, strict=schema.get("additionalProperties") is False)
        if isinstance(value, list) and isinstance(schema.get("items"), dict):
            for i, item in enumerate(value):
                problem = self.check(item, schema["items"], f"{path}[{i}]")
                if problem:
                    return problem
        return None

    def _union(self, value: Any, key: str, branches: list[Any], path: str) -> str | None:
        problems = [self.check(value, b, path) for b in branches]
        matched = [i for i, p in enumerate(problems) if p is None]
        if not matched:
            # identical branches fail identically: each reason once, so the message grows with depth, not 2^depth
            return _cut(f"{path}: matches none of {key}: " + "; ".join(dict.fromkeys(p for p in problems if p)))
        if key == "oneOf" and len(matched) > 1:
            shown = ", ".join(f"#{i}" for i in matched[:5]) + (", ..." if len(matched) > 5 else "")
            return f"{path}: matches {len(matched)} branches of oneOf ({shown}); oneOf allows exactly one"
        return None

    def check_object(self, value: dict[str, Any], schema: dict[str, Any], path: str, strict: bool) -> str | None:
        props = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
        for name in schema.get("required") or []:
            if name not in value:
                return _cut(f"{path}: missing required argument {_short(name)}")
        for name, item in value.items():
            if name in props:
                problem = self.check(item, props[name], f"{path}.{name}")
                if problem:
                    return problem
            elif strict:
                allowed = ", ".join(sorted(props)) or "none"
                return _cut(f"{path}: unexpected argument {_short(name)} (allowed: {allowed})")
        return None


def check_call(tool: str, args: Any, index: dict[str, dict[str, Any]] | None) -> str | None:
    """None if the call may run, else a one-line reason. Without an index only names are checked."""
    problem = private_name_problem(tool)
    if problem:
        return problem
    if not isinstance(args, dict):
        return f"arguments to {tool} must be a JSON object, got {json_type(args)}"
    problem = value_problem(args, tool)
    if problem:
        return problem
    if index is None:
        return None
    if tool not in index:
        known = ", ".join(sorted(index)) or "none"
        return f"unknown tool {_short(tool)} (available: {known})"
    # Top level: an argument the schema does not declare is always an error (the agent invented it).
    params = index[tool]
    strict = params.get("additionalProperties") is not True
    if not isinstance(params, dict):
        return None
    try:
        return _Checker().check_object(args, params, tool, strict=strict)
    except _TooCostly:
        return (f"arguments to {tool} need more than {MAX_CHECK_STEPS:,} steps to check against its schema "
                "(sandbox.schema.MAX_CHECK_STEPS); send less")
