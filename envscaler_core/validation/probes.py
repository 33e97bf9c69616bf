"""Schema-driven probe calls: one positive and one negative call per tool, with no LLM.

Positive arguments are taken from the test state wherever a parameter name can be matched to a value
that exists there (an existing `patient_id`, a key of the `patients` container, ...), so the call has
a fair chance of succeeding; negative arguments keep the schema's types (a schema-rejected call would
test the sandbox, not the environment) but point at things that do not exist or are out of range.
Probes are deliberately simple: their job is to surface contract breaches cheaply and reproducibly.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from envscaler_core.models.env import ToolSchema
from envscaler_core.models.validation import CaseType

MISSING_ID = "__missing_id__"


class Probe(BaseModel):
    tool: str
    args: dict[str, Any]
    case_type: CaseType


def _values_under(state: Any, key: str) -> list[Any]:
    """Scalar values stored under `key` anywhere in the state, in document order."""
    found: list[Any] = []
    if isinstance(state, dict):
        for k, v in state.items():
            if k == key and isinstance(v, str | int | float | bool):
                found.append(v)
            found.extend(_values_under(v, key))
    elif isinstance(state, list):
        for v in state:
            found.extend(_values_under(v, key))
    return found


def _container_keys(state: dict[str, Any], param: str) -> list[str]:
    """For `patient_id`, the keys of a dict attribute named like `patients`/`patient`."""
    stem = param.removesuffix("_id").removesuffix("id").rstrip("_").lower()
    if not stem:
        return []
    for attr, value in state.items():
        name = attr.lower()
        if isinstance(value, dict) and value and (name.startswith(stem) or stem.startswith(name.rstrip("s"))):
            return [str(k) for k in value]
    return []


def _kind(schema: dict[str, Any]) -> str:
    types = schema.get("type", "string")
    return next((t for t in types if t != "null"), "string") if isinstance(types, list) else str(types)


def _default(schema: dict[str, Any]) -> Any:
    if schema.get("enum"):
        return schema["enum"][0]
    return {"string": "sample", "integer": 1, "number": 1.0, "boolean": True, "array": [], "object": {}}.get(
        _kind(schema), "sample")


def positive_values(param: str, schema: dict[str, Any], state: dict[str, Any]) -> list[Any]:
    """Plausible valid values, best first: enum members, values stored under the same name, keys of
    a matching container; the type's default when the state offers nothing."""
    if schema.get("enum"):
        return list(schema["enum"])
    kind = _kind(schema)
    found: list[Any] = []
    for value in _values_under(state, param):
        fits = (kind == "string" and isinstance(value, str)) or (
            kind in ("integer", "number") and isinstance(value, int | float) and not isinstance(value, bool))
        if fits and value not in found:
            found.append(value)
    if kind == "string" and param.lower().endswith("id"):
        found += [k for k in _container_keys(state, param) if k not in found]
    return found or [_default(schema)]


def negative_value(param: str, schema: dict[str, Any]) -> Any:
    """Same type, but pointing at nothing: a missing id, an empty string, a negative number."""
    kind = _kind(schema)
    if kind == "string":
        return MISSING_ID if param.lower().endswith("id") or not schema.get("enum") else ""
    if kind == "integer":
        return -1
    if kind == "number":
        return -1.0
    return _default(schema)


def boundary_value(schema: dict[str, Any]) -> Any | None:
    """An extreme but well-typed value, or None when the type has no useful extreme."""
    kind = _kind(schema)
    if schema.get("enum"):
        return None
    return {"integer": 10**9, "number": 1e12, "string": "x" * 5000, "array": [], "object": {}}.get(kind)


def _tool_probes(tool: ToolSchema, state: dict[str, Any]) -> list[Probe]:
    """This tool's probes in the order they are worth running."""
    name = tool.function.name
    params = tool.function.parameters
    props: dict[str, Any] = params.get("properties", {})
    required = [n for n in props if n in set(params.get("required", []))]
    options = {n: positive_values(n, props[n], state) for n in required}
    first = {n: options[n][0] for n in required}
    probes = [Probe(tool=name, case_type="positive", args=first)]
    if not required:
        return probes
    target = next((n for n in required if n.lower().endswith("id")), required[0])
    probes.append(Probe(tool=name, case_type="negative", args={**first, target: negative_value(target, props[target])}))
    for k in (1, 2):  # other existing entities
        args = {n: v[k] if len(v) > k else v[0] for n, v in options.items()}
        if args != first and all(p.args != args for p in probes):
            probes.append(Probe(tool=name, case_type="positive", args=args))
    for n in required:
        extreme = boundary_value(props[n])
        if extreme is not None and not n.lower().endswith("id"):
            probes.append(Probe(tool=name, case_type="negative", args={**first, n: extreme}))
    return probes


def probes_for(tools: list[ToolSchema], state: dict[str, Any], limit: int | None = None) -> list[Probe]:
    """Round-robin over tools (every tool gets its positive, then its negative probe, before any tool
    gets a third), up to `limit` probes in total (None: all of them)."""
    queues = [_tool_probes(t, state) for t in tools]
    out: list[Probe] = []
    depth = 0
    while any(depth < len(q) for q in queues) and (limit is None or len(out) < limit):
        for q in queues:
            if depth < len(q) and (limit is None or len(out) < limit):
                out.append(q[depth])
        depth += 1
    return out
