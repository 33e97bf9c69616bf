"""What one parameter of a tool can take in a probe: values from the test state, found where the
method looks them up, under fields of the same name, in containers named like the parameter, in arrays
the state holds; fresh ids in the state's own style for tools that create things; further keywords for
a tool taking `**kwargs`. `probes.ToolPlan` combines them into argument sets."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from envscaler_core.validation.code_effects import Binding
from envscaler_core.validation.state_values import (
    SKIP_ATTRS as SKIP_TOP, RecordSet, binding_values, dedup, fresh_id, fresh_text, id_like, is_scalar, later_dates,
    nodes_at, sets_for_param, values_under,
)

MAX_CANDIDATES = 6
EDGES_PER_PARAM = 2
_DATE_NAME = re.compile(r"date|_at$|_on$|deadline|due|day$|^(start|end|until|since|expires?)$")


@dataclass
class ParamOptions:
    """Values worth trying for one parameter, best first; `reference` if it names a stored entity."""

    name: str
    kind: str
    values: list[Any]
    reference: bool = False
    records: list[RecordSet] = field(default_factory=list)
    existing: list[Any] = field(default_factory=list)
    bindings: list[Binding] = field(default_factory=list)
    enumerated: bool = False  # the values are the schema's enum or the code's own list of choices


def _kind(schema: dict[str, Any]) -> str:
    """The parameter's JSON type; a union (a list of types, `anyOf`/`oneOf`) is its member types joined
    by `|` (`integer|string`), null left out: each member type is probed, not just the first."""
    members = _member_kinds(schema)
    if len(members) > 1:
        return "|".join(members)
    if members:
        return members[0]
    return "string" if "enum" not in schema else "enum"


def _member_kinds(schema: Any) -> list[str]:
    if not isinstance(schema, dict):
        return []
    types = schema.get("type")
    out = [t for t in (types if isinstance(types, list) else [types]) if isinstance(t, str) and t != "null"]
    for key in ("anyOf", "oneOf"):
        if isinstance(schema.get(key), list):
            out += [k for branch in schema[key] for k in (_member_kinds(branch) or
                    ([] if isinstance(branch, dict) and branch.get("type") == "null" else ["string"]))]
    return dedup(out)


def _fits(value: Any, kind: str) -> bool:
    if "|" in kind:
        return any(_fits(value, k) for k in kind.split("|"))
    if kind == "string":
        return isinstance(value, str)
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    if kind == "boolean":
        return isinstance(value, bool)
    return True


def typed_values(values: list[Any], kind: str) -> list[Any]:
    """Values of the parameter's type; numeric dict keys ("7") count for integer parameters."""
    out = []
    if "|" in kind:  # a union: the values as they are, each kept if some member type takes it
        return dedup([v for v in values if _fits(v, kind)])
    for v in values:
        if kind == "integer" and isinstance(v, str) and v.lstrip("-").isdigit():
            v = int(v)
        elif kind == "string" and isinstance(v, int) and not isinstance(v, bool):
            v = str(v)  # a string parameter naming integer ids: the class converts it
        if _fits(v, kind):
            out.append(v)
    return dedup(out)


def kind_defaults(name: str, kind: str, state: dict[str, Any]) -> list[Any]:
    """Values of `kind` to try when the state offers none for the parameter (or a dict's key) `name`."""
    if "|" in kind:
        return dedup([v for k in kind.split("|") for v in kind_defaults(name, k, state)])
    lowered = name.lower()
    if kind == "string":
        if _DATE_NAME.search(lowered):
            return later_dates(state, name)
        if "time" in lowered or "slot" in lowered:
            return ["09:00", "2030-06-15T09:00"]
        if "email" in lowered:
            return ["someone@example.com"]
        return ["sample"]
    return {"integer": [1, 0, 2], "number": [1.0, 10.0], "boolean": [True, False], "array": [[]],
            "object": [{}]}.get(kind, ["sample"])


def _objects(name: str, sets: list[RecordSet]) -> list[dict[str, Any]]:
    """For a dict parameter (`changes`, `updates`, `profile`): one field of an existing record, with its
    own value, so an update with 'nothing to change' is not the only thing tried."""
    for rs in sets:
        for _, record, _ in rs.keyed_records():
            for field_name, value in record.items():
                if field_name != rs.id_field and isinstance(value, str) and value:
                    return [{field_name: value}]
    return []


def _arrays_held(state: dict[str, Any], name: str, items: dict[str, Any], near: set[str]) -> list[list[Any]]:
    """Arrays (tuples, sets and lists, as `plan_view` gives them) the state holds that fit an array
    parameter's item schema, best first: under a field named like the parameter (`assignees`, `tag`
    for `tags`), then inside the attributes the tool itself reads or writes (`milestones` for
    `set_milestone(name, window: Tuple[str, str])`, whose windows are `(start, end)` pairs), then
    anywhere; records (lists of objects) only for an object item schema. A parameter typed
    `Tuple[str, str]` or `list[int]` was only ever probed with `[]` before (outside check F2)."""
    names = {name, name.removesuffix("s"), name + "s", name.removeprefix("new_")}
    item_kinds = _member_kinds(items) if items else []
    found: list[tuple[int, list[Any]]] = []

    def fits(value: list[Any]) -> bool:
        if not item_kinds:
            return all(is_scalar(v) for v in value)
        return all(any(_fits(v, k) if k not in ("object", "array") else isinstance(v, dict if k == "object" else list)
                       for k in item_kinds) for v in value)

    def walk(node: Any, key: Any, top: str | None, depth: int) -> None:
        if depth > 6:
            return
        if isinstance(node, list):
            if node and fits(node):
                found.append((0 if key in names else 1 if top in near else 2, node))
            for v in node:
                walk(v, None, top, depth + 1)
        elif isinstance(node, dict):
            for k, v in node.items():
                if depth == 0 and k in SKIP_TOP:
                    continue
                walk(v, k, k if depth == 0 else top, depth + 1)

    walk(state, None, None, 0)
    found.sort(key=lambda rv: rv[0])
    return dedup([v for _, v in found])[:MAX_CANDIDATES]


def param_options(name: str, schema: dict[str, Any], state: dict[str, Any], sets: list[RecordSet],
                  bindings: list[Binding], creates: bool, literals: list[Any] | None = None,
                  near: set[str] | None = None) -> ParamOptions:
    kind = _kind(schema)
    if schema.get("enum"):
        return ParamOptions(name, kind, list(schema["enum"]), enumerated=True)
    if "|" in kind:
        return _union_options(name, kind, state, sets, bindings, creates, literals)
    if kind == "object":
        return ParamOptions(name, kind, _objects(name, sets) + [{}])
    keyed = [b for b in bindings if not b.values]
    id_fields = [b for b in bindings if b.values and any(b.path == rs.path + (rs.id_field,) for rs in sets
                                                         if rs.id_field) or (b.values and id_like(b.path[-1]))]
    reference = bool(keyed or id_fields) or (kind in ("string", "integer") and id_like(name))
    bound = [v for b in bindings for v in binding_values(state, b)]
    if kind == "integer":  # an index into a list the method subscripts (`order["lines"][line_no]`)
        bound += [i for b in keyed for node in nodes_at(state, b.path) if isinstance(node, list)
                  for i in range(min(len(node), MAX_CANDIDATES))]
    same = values_under(state, name) + values_under(state, name.removeprefix("new_"))
    named_sets = sets_for_param(name, sets)
    if kind == "array":
        items = schema.get("items") if isinstance(schema.get("items"), dict) else {}
        item_kind = _kind(items) if items else "string"
        singular = name.removesuffix("s")
        ids = param_options(singular, {"type": item_kind}, state, sets, bindings, creates) \
            if singular != name and id_like(singular) else None
        values = [[ids.values[0]]] if ids and ids.values else []
        held = _arrays_held(state, name, items, near or set())
        return ParamOptions(name, kind, dedup(held[:1] + values + held[1:] + [[]])[:MAX_CANDIDATES], reference=False)
    if not reference:
        found = [v for v in typed_values(bound + (literals or []) + same, kind) if v != ""][:MAX_CANDIDATES]
        if creates and kind == "string" and found:
            found.insert(1, fresh_text(found[0]))  # a unique name or email for something new
        if kind == "string" and _DATE_NAME.search(name.lower()):
            found = later_dates(state, name)[:1] + found  # "after the current due date", "not logged yet"
        values = found + kind_defaults(name, kind, state)
        return ParamOptions(name, kind, dedup(values), bindings=bindings, enumerated=bool(literals))
    by_binding = [rs for rs in sets if any(b.path == rs.path for b in keyed)
                  or any(b.path[:-1] == rs.path for b in id_fields)]
    records = by_binding or named_sets
    existing = typed_values(bound + same + [i for rs in named_sets for i in rs.ids()], kind)
    if not existing:
        existing = typed_values([i for rs in sets for i in rs.ids()], kind)
    if not records:
        records = [rs for rs in sets if any(i in existing for i in rs.ids())]
    values = existing[:MAX_CANDIDATES]
    fresh = fresh_id([i for rs in records for i in rs.ids()] or existing)
    if _fits(fresh, kind):
        values.insert(1 if creates and values else len(values), fresh)
    return ParamOptions(name, kind, values or kind_defaults(name, kind, state), True, records, existing, bindings)


def _union_options(name: str, kind: str, state: dict[str, Any], sets: list[RecordSet], bindings: list[Binding],
                   creates: bool, literals: list[Any] | None) -> ParamOptions:
    """A union-typed parameter (`priority: Union[int, str]`): first the values the state holds for it in
    their own types (3 and 2 stay integers; turning them into "3" and "2" made a sound class's tool refuse
    every probe), then each member type's own candidates in turn."""
    per = [param_options(name, {"type": k}, state, sets, bindings, creates, literals) for k in kind.split("|")]
    held = [v for b in bindings for v in binding_values(state, b)] + values_under(state, name) + list(literals or [])
    values = typed_values(held, kind)[:MAX_CANDIDATES]
    for rank in range(max(len(p.values) for p in per)):
        values += [p.values[rank] for p in per if rank < len(p.values)]
    return ParamOptions(name, kind, dedup(values), reference=any(p.reference for p in per),
                        records=[r for p in per for r in p.records],
                        existing=dedup([v for p in per for v in p.existing]), bindings=bindings,
                        enumerated=bool(literals))


def keyword_candidates(options: dict[str, ParamOptions], sets: list[RecordSet], fn: Any,
                       declared: set[str], limit: int = EDGES_PER_PARAM + 1) -> list[dict[str, Any]]:
    """Further keywords for a tool taking `**kwargs` (`update_patient(patient_id, **fields)`): fields of
    the records its parameters name (else of any record), those the method's code spells out as strings
    first (`allowed = {"phone", "email"}`), each with a value that field holds in another record, so the
    code behind the keyword check runs. Up to `limit`, one keyword each (a dict parameter takes more:
    `dict_params`)."""
    import ast

    spelled = {n.value for n in ast.walk(fn) if isinstance(n, ast.Constant) and isinstance(n.value, str)} \
        if fn is not None else set()
    records = [rs for o in options.values() for rs in o.records] or sets
    values: dict[str, list[Any]] = {}
    for rs in records:
        for _, record, _ in rs.keyed_records():
            for name, value in record.items():
                if isinstance(name, str) and name != rs.id_field and name not in declared and name.isidentifier():
                    values.setdefault(name, []).append(value)
    ranked = sorted(values, key=lambda n: (n not in spelled, list(values).index(n)))
    out = []
    for name in ranked[:limit]:
        held = values[name]
        value = next((v for v in reversed(held) if v is not None), held[0])
        out.append({name: value})
    return out
