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


def _container_key(state: dict[str, Any], param: str) -> str | None:
    """For `patient_id`, the first key of a dict attribute named like `patients`/`patient`."""
    stem = param.removesuffix("_id").removesuffix("id").rstrip("_").lower()
    if not stem:
        return None
    for attr, value in state.items():
        name = attr.lower()
        if isinstance(value, dict) and value and (name.startswith(stem) or stem.startswith(name.rstrip("s"))):
            return str(next(iter(value)))
    return None


def _default(schema: dict[str, Any]) -> Any:
    if schema.get("enum"):
        return schema["enum"][0]
    types = schema.get("type", "string")
    kind = next((t for t in types if t != "null"), "string") if isinstance(types, list) else types
    return {"string": "sample", "integer": 1, "number": 1.0, "boolean": True, "array": [], "object": {}}.get(kind, "sample")


def _kind(schema: dict[str, Any]) -> str:
    types = schema.get("type", "string")
    return next((t for t in types if t != "null"), "string") if isinstance(types, list) else str(types)


def positive_value(param: str, schema: dict[str, Any], state: dict[str, Any]) -> Any:
    if schema.get("enum"):
        return schema["enum"][0]
    kind = _kind(schema)
    for value in _values_under(state, param):
        if (kind == "string" and isinstance(value, str)) or (kind in ("integer", "number") and isinstance(value, int | float)
                                                             and not isinstance(value, bool)):
            return value
    if kind == "string" and param.lower().endswith("id"):
        key = _container_key(state, param)
        if key is not None:
            return key
    return _default(schema)


def negative_value(param: str, schema: dict[str, Any]) -> Any:
    kind = _kind(schema)
    if kind == "string":
        return MISSING_ID if param.lower().endswith("id") or not schema.get("enum") else ""
    if kind == "integer":
        return -1
    if kind == "number":
        return -1.0
    return _default(schema)


def probes_for(tools: list[ToolSchema], state: dict[str, Any]) -> list[Probe]:
    """Two probes per tool, in tool order: positive, then negative (skipped for tools with no parameters)."""
    probes: list[Probe] = []
    for tool in tools:
        params = tool.function.parameters
        props: dict[str, Any] = params.get("properties", {})
        required = set(params.get("required", []))
        names = [n for n in props if n in required]
        probes.append(Probe(tool=tool.function.name, case_type="positive",
                            args={n: positive_value(n, props[n], state) for n in names}))
        if names:
            target = next((n for n in names if n.lower().endswith("id")), names[0])
            args = {n: positive_value(n, props[n], state) for n in names}
            args[target] = negative_value(target, props[target])
            probes.append(Probe(tool=tool.function.name, case_type="negative", args=args))
    return probes
