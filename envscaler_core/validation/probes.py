"""Schema- and code-driven probe calls, no LLM: what the programmatic pass tries on each tool.

A probe is worth something only if it reaches the code it means to test. So, per tool:

* **positive** candidates: argument sets built from values that exist in the test state, found where
  the method looks them up (`self.items[item_id]` -> keys of `items`), under fields of the same name,
  in containers named like the parameter, and, for tools that create things, a fresh id in the
  state's own style. They are tried best first until the env accepts one (a refused positive means the
  probe never reached the code, not that the tool passed);
* **edge** calls: existing records whose fields the method's conditions read take every value the
  state offers (the book with no copies left, the cancelled appointment), so guarded branches fire;
* **missing**: an id parameter pointing at nothing (ordinary strings such as names or titles are never
  probed as missing ids);
* **boundary**: out-of-range numbers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel

from envscaler_core.models.env import ToolSchema
from envscaler_core.models.validation import CaseType
from envscaler_core.validation.code_effects import Binding, ClassEffects
from envscaler_core.validation.state_values import (
    SKIP_ATTRS as SKIP_TOP, MISSING_ID, RecordSet, binding_values, parts, plan_view, dedup, fresh_id, id_like, is_scalar, fresh_text, later_dates, linked_values, missing_value, nodes_at, record_sets,
    sets_for_param, values_under,
)
from envscaler_core.validation.tool_kinds import words

MAX_CANDIDATES = 6
MAX_POSITIVE_ATTEMPTS = 8
MAX_EDGES = 6
EDGES_PER_PARAM = 2
TOGETHER_PER_GROUP = 4
CREATE_VERBS = frozenset({"add", "create", "register", "new", "insert", "open", "issue", "submit", "enroll",
                          "enrol", "book", "reserve", "schedule", "log", "record", "post", "upload", "import",
                          "file", "make", "place", "put", "save", "store", "join", "invite", "assign"})
_DATE_NAME = re.compile(r"date|_at$|_on$|deadline|due|day$|^(start|end|until|since|expires?)$")
Purpose = Literal["positive", "edge", "missing", "boundary", "sequence"]


class Probe(BaseModel):
    tool: str
    args: dict[str, Any]
    case_type: CaseType
    purpose: Purpose = "positive"
    note: str = ""
    setup: list[tuple[str, dict[str, Any]]] = []
    """Calls made first in the same fresh episode (another tool's accepted state change: a `login`
    before `set_my_email`); the probe's facts are about the state they leave."""
    fed: dict[str, str] = {}
    """Parameters taken from what the setup calls returned, in that very episode: parameter -> key of a
    setup result (`session_token` from `open_session`'s `{"data": {"session_token": "sess-1"}}`)."""


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


def _typed(values: list[Any], kind: str) -> list[Any]:
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


def _defaults(name: str, kind: str, state: dict[str, Any]) -> list[Any]:
    if "|" in kind:
        return dedup([v for k in kind.split("|") for v in _defaults(name, k, state)])
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
        found = [v for v in _typed(bound + (literals or []) + same, kind) if v != ""][:MAX_CANDIDATES]
        if creates and kind == "string" and found:
            found.insert(1, fresh_text(found[0]))  # a unique name or email for something new
        if kind == "string" and _DATE_NAME.search(name.lower()):
            found = later_dates(state, name)[:1] + found  # "after the current due date", "not logged yet"
        values = found + _defaults(name, kind, state)
        return ParamOptions(name, kind, dedup(values), bindings=bindings, enumerated=bool(literals))
    by_binding = [rs for rs in sets if any(b.path == rs.path for b in keyed)
                  or any(b.path[:-1] == rs.path for b in id_fields)]
    records = by_binding or named_sets
    existing = _typed(bound + same + [i for rs in named_sets for i in rs.ids()], kind)
    if not existing:
        existing = _typed([i for rs in sets for i in rs.ids()], kind)
    if not records:
        records = [rs for rs in sets if any(i in existing for i in rs.ids())]
    values = existing[:MAX_CANDIDATES]
    fresh = fresh_id([i for rs in records for i in rs.ids()] or existing)
    if _fits(fresh, kind):
        values.insert(1 if creates and values else len(values), fresh)
    return ParamOptions(name, kind, values or _defaults(name, kind, state), True, records, existing, bindings)


def _union_options(name: str, kind: str, state: dict[str, Any], sets: list[RecordSet], bindings: list[Binding],
                   creates: bool, literals: list[Any] | None) -> ParamOptions:
    """A union-typed parameter (`priority: Union[int, str]`): first the values the state holds for it in
    their own types (3 and 2 stay integers; turning them into "3" and "2" made a sound class's tool refuse
    every probe), then each member type's own candidates in turn."""
    per = [param_options(name, {"type": k}, state, sets, bindings, creates, literals) for k in kind.split("|")]
    held = [v for b in bindings for v in binding_values(state, b)] + values_under(state, name) + list(literals or [])
    values = _typed(held, kind)[:MAX_CANDIDATES]
    for rank in range(max(len(p.values) for p in per)):
        values += [p.values[rank] for p in per if rank < len(p.values)]
    return ParamOptions(name, kind, dedup(values), reference=any(p.reference for p in per),
                        records=[r for p in per for r in p.records],
                        existing=dedup([v for p in per for v in p.existing]), bindings=bindings,
                        enumerated=bool(literals))


class ToolPlan:
    """Everything the programmatic pass will try on one tool."""

    def __init__(self, tool: ToolSchema, state: dict[str, Any], sets: list[RecordSet],
                 effects: ClassEffects | None) -> None:
        self.tool = tool.function.name
        params = tool.function.parameters
        props: dict[str, Any] = params.get("properties", {})
        required = set(params.get("required", []))
        self.required = [n for n in props if n in required]
        tokens = words(self.tool)
        self.creates = bool(tokens) and tokens[0] in CREATE_VERBS
        bindings = effects.bindings(self.tool) if effects and self.tool in effects.methods else {}
        self.guard_fields = effects.guard_fields(self.tool) if effects and self.tool in effects.methods else None
        literals = effects.literals(self.tool) if effects and self.tool in effects.methods else {}
        near = {w.attr for w in effects.writes(self.tool)} | {b.path[0] for bs in bindings.values() for b in bs if b.path} \
            if effects and self.tool in effects.methods else set()
        self.options = {n: param_options(n, props[n], state, sets, bindings.get(n, []), self.creates, literals.get(n),
                                         near) for n in self.required}
        self.state = state
        fn = effects.methods.get(self.tool) if effects else None
        self.keywords = _keyword_candidates(self.options, sets, fn, set(props)) \
            if params.get("additionalProperties") is True else []

    def positives(self) -> list[Probe]:
        """Candidate argument sets by increasing total rank (every parameter's first choice before any
        pair of second choices; ids change first). A parameter's candidates are reordered by what was
        already chosen: once appointment A-1 (with doctor D2) is picked, D2's open slots come first."""
        names = sorted(self.required, key=lambda n: not self.options[n].reference)
        out: list[dict[str, Any]] = []

        def fill(j: int, chosen: dict[str, Any], rest: int) -> None:
            if len(out) >= MAX_POSITIVE_ATTEMPTS:
                return
            if j == len(names):
                if rest == 0 and chosen not in out:
                    out.append(chosen)
                return
            candidates = self._ordered(names[j], chosen)
            for k in reversed(range(min(rest, len(candidates) - 1) + 1)):
                fill(j + 1, {**chosen, names[j]: candidates[k]}, rest - k)

        ceiling = sum(len(self.options[n].values) for n in names)
        for total in range(ceiling + 1):
            fill(0, {}, total)
            if len(out) >= MAX_POSITIVE_ATTEMPTS:
                break
        together = [args for args in self._together() if args not in out[:1]]
        if together:  # right after the best set: one record's (one key's) values for the parameters it binds
            out = out[:1] + together + [args for args in out[1:] if args not in together]
        if self.keywords and out:  # `**fields`: the best set first with each further keyword, then without
            out = [{**out[0], **kw} for kw in self.keywords] + out
        return [Probe(tool=self.tool, case_type="positive", purpose="positive", args=args) for args in out]

    def _together(self) -> list[dict[str, Any]]:
        """Argument sets in which every parameter bound to one container takes its value from one and
        the same entry: the components of one existing tuple key (`row` and `col` of a seat that exists),
        or the key and fields of one record, for any number of parameters; the other parameters take
        existing values, never a fresh id (a seat that exists was only tried with a screening that does
        not, outside check F3). At most `TOGETHER_PER_GROUP` entries per container, and only where two or
        more parameters are bound to it: a few more candidates, not a Cartesian product."""
        groups: dict[tuple[str, ...], dict[str, Binding]] = {}
        for name in self.required:
            for b in self.options[name].bindings:
                if b.part is not None:
                    groups.setdefault(("key",) + b.path, {})[name] = b
                elif not b.values:
                    groups.setdefault(("rec",) + b.path, {})[name] = b
                elif len(b.path) >= 2 and b.path[-2] == "*":
                    groups.setdefault(("rec",) + b.path[:-2], {})[name] = b
        out: list[dict[str, Any]] = []
        for (how, *path), members in groups.items():
            if len(members) < 2:
                continue
            for entry in self._entries(how, tuple(path), members)[:TOGETHER_PER_GROUP]:
                chosen = dict(entry)
                for name in self.required:
                    if name not in chosen:
                        opt = self.options[name]
                        ordered = self._ordered(name, chosen)
                        chosen[name] = next((v for v in ordered if not opt.existing or v in opt.existing), ordered[0]) \
                            if ordered else None
                args = {n: chosen[n] for n in self.required}
                if None not in args.values() and args not in out:
                    out.append(args)
        return out

    def _entries(self, how: str, path: tuple[str, ...], members: dict[str, Binding]) -> list[dict[str, Any]]:
        """Per entry of the container at `path`: the value each bound parameter takes from it."""
        out: list[dict[str, Any]] = []
        for node in nodes_at(self.state, path):
            if how == "key":
                for key in (list(node) if isinstance(node, dict | list) else []):
                    if isinstance(key, tuple | list) and all(b.part is not None and b.part < len(key) and is_scalar(key[b.part])
                                                             for b in members.values()):
                        out.append({n: key[b.part] for n, b in members.items()})  # type: ignore[index]
            elif isinstance(node, dict):
                for key, record in node.items():
                    if isinstance(record, dict):
                        entry = {n: key if not b.values else record.get(b.path[-1]) for n, b in members.items()}
                        if all(is_scalar(v) for v in entry.values()):
                            out.append(entry)
        return [{n: (_typed([v], self.options[n].kind) or [v])[0] for n, v in e.items()} for e in out]

    def _ordered(self, name: str, chosen: dict[str, Any]) -> list[Any]:
        """This parameter's candidates given the values already chosen: values structurally linked to
        them first (the chosen appointment's doctor's slots, the chosen room's building), values
        another parameter already holds last (a transfer from an account to itself proves little)."""
        opt = self.options[name]
        taken = [v for v in chosen.values() if is_scalar(v)]
        fields, parents = self._linked(chosen)
        preferred: list[Any] = []
        together = self._key_parts(name, chosen)
        if together:  # the other components of a tuple key are chosen: this one from the same keys
            return dedup(together + opt.values)
        if fields or parents:
            narrowing = fields | parents | set(taken)  # the chosen member narrows members/*/borrowed
            preferred = _typed([v for b in opt.bindings for v in linked_values(self.state, b, narrowing)], opt.kind)
            preferred += [v for v in opt.values if is_scalar(v) and v in parents]
        if not preferred and not any(v in taken for v in opt.values if is_scalar(v)):
            return opt.values
        ordered = dedup(preferred + opt.values)
        return [v for v in ordered if not (is_scalar(v) and v in taken)] + [v for v in ordered if is_scalar(v) and v in taken]

    def _key_parts(self, name: str, chosen: dict[str, Any]) -> list[Any]:
        """This parameter's component of the tuple keys whose other components are the chosen values
        (`row` 1 chosen: the `col`s of the keys `(1, c)`), which may repeat a value another part holds."""
        out: list[Any] = []
        for mine in (b for b in self.options[name].bindings if b.part is not None):
            fixed = {b.part: chosen[other] for other, opt in self.options.items() if other in chosen
                     for b in opt.bindings if b.part is not None and b.path == mine.path and is_scalar(chosen[other])}
            if not fixed:
                continue
            for node in nodes_at(self.state, mine.path):
                keys = [k for k in (list(node) if isinstance(node, dict | list) else [])
                        if isinstance(k, tuple | list) and len(k) > max([mine.part, *fixed])]
                out += [k[mine.part] for k in keys if all(k[p] == v for p, v in fixed.items())
                        and is_scalar(k[mine.part])]
        return _typed(out, self.options[name].kind)

    def _linked(self, chosen: dict[str, Any]) -> tuple[set[Any], set[Any]]:
        """(scalar fields of the records the chosen values name, keys of the records they sit in)."""
        fields: set[Any] = set()
        parents: set[Any] = set()
        for name, value in chosen.items():
            if not is_scalar(value):
                continue
            for rs in self.options[name].records:
                for key, record, above in rs.keyed_records():
                    if key == value:
                        fields.update(v for v in record.values() if is_scalar(v) and not isinstance(v, bool))
                        parents.update(above)
        return fields, parents

    def edges(self, base: dict[str, Any]) -> list[Probe]:
        """Existing records that differ from the one in `base` in a field the method's conditions read
        (up to two per id parameter); parameters that took a fresh id in `base` are left alone."""
        out: list[Probe] = []
        for name, opt in self.options.items():
            if not opt.reference or (name in base and base[name] not in opt.existing):
                continue
            mine: list[Probe] = []
            for key, note in self._edge_records(opt, base.get(name)):
                args = self._around(name, key, base)
                if all(p.args != args for p in out + mine):
                    mine.append(Probe(tool=self.tool, args=args, case_type="positive", purpose="edge", note=note))
            if not mine and len(opt.existing) > 1:  # no field-guarded branch to aim at: another record
                other = next((v for v in reversed(opt.existing) if v != base.get(name)), None)
                if other is not None:
                    mine.append(Probe(tool=self.tool, args=self._around(name, other, base), case_type="positive",
                                      purpose="edge", note=f"another existing {name}"))
            out += mine[:EDGES_PER_PARAM]
        text = next((n for n, o in self.options.items() if o.kind == "string" and not o.reference
                     and not o.enumerated and base.get(n)), None)
        if text is not None:  # a rule on the text ("title required") must refuse without changing anything
            out.append(Probe(tool=self.tool, args={**base, text: ""}, case_type="positive", purpose="edge",
                             note=f"{text}=''"))
        for name, opt in self.options.items():  # the other side of a flag or a known choice
            if opt.reference or not (opt.kind == "boolean" or opt.enumerated):
                continue
            for value in [v for v in opt.values if v != base.get(name)][:EDGES_PER_PARAM]:
                out.append(Probe(tool=self.tool, args={**base, name: value}, case_type="positive", purpose="edge",
                                 note=f"{name}={value!r}"))
        return out[:MAX_EDGES]

    def _around(self, name: str, value: Any, base: dict[str, Any]) -> dict[str, Any]:
        """`base` with `name` set to `value` and the other ids re-chosen to fit it (that record's doctor's
        slots, not the first record's)."""
        chosen = {name: value}
        for other in self.required:
            if other != name and other in base:
                ordered = self._ordered(other, chosen)
                chosen[other] = ordered[0] if ordered is not self.options[other].values else base[other]
        return {n: chosen.get(n, base.get(n)) for n in base}

    def _edge_records(self, opt: ParamOptions, used: Any) -> list[tuple[Any, str]]:
        picks: list[tuple[Any, str]] = []
        for rs in opt.records:
            recs = [(k, r) for k, r, _ in rs.keyed_records() if k != used]
            fields = sorted({f for _, r in recs for f, v in r.items() if is_scalar(v) or v is None})
            if self.guard_fields is not None:
                fields = [f for f in fields if f in self.guard_fields and f != rs.id_field]
            for f in fields:
                for key, rec in _representatives(recs, f):
                    key = _typed([key], opt.kind)
                    if key and all(key[0] != k for k, _ in picks):
                        picks.append((key[0], f"{'/'.join(rs.path)}/{key[0]}: {f}={rec.get(f)!r}"))
        return picks

    def missing(self, base: dict[str, Any]) -> list[Probe]:
        """A missing id per reference parameter, except where the accepted call already used a value
        the state does not hold (a creation: there a 'missing' id is simply the next new one)."""
        out = []
        for name, opt in self.options.items():
            if opt.reference and (name not in base or base[name] in opt.existing):
                args = {**base, name: missing_value(opt.existing, opt.kind)}
                out.append(Probe(tool=self.tool, args=args, case_type="negative", purpose="missing",
                                 note=f"{name} names nothing in the state"))
        return out[:2]

    def boundaries(self, base: dict[str, Any]) -> list[Probe]:
        out = []
        for name, opt in self.options.items():
            if opt.kind in ("integer", "number") and not opt.reference:
                for extreme in ((10**9, -1) if opt.kind == "integer" else (1e12, -1.0)):
                    out.append(Probe(tool=self.tool, args={**base, name: extreme}, case_type="negative",
                                     purpose="boundary", note=f"{name}={extreme}"))
        return out


def _keyword_candidates(options: dict[str, ParamOptions], sets: list[RecordSet], fn: Any,
                        declared: set[str]) -> list[dict[str, Any]]:
    """Further keywords for a tool taking `**kwargs` (`update_patient(patient_id, **fields)`): fields of
    the records its parameters name (else of any record), those the method's code spells out as strings
    first (`allowed = {"phone", "email"}`), each with a value that field holds in another record, so the
    code behind the keyword check runs. Up to `EDGES_PER_PARAM` + 1, one keyword each."""
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
    for name in ranked[:EDGES_PER_PARAM + 1]:
        held = values[name]
        value = next((v for v in reversed(held) if v is not None), held[0])
        out.append({name: value})
    return out


def _representatives(recs: list[tuple[Any, dict[str, Any]]], f: str) -> list[tuple[Any, dict[str, Any]]]:
    """Records covering the values of field `f`: smallest and largest numbers, each boolean, each
    (of up to four) distinct short strings, a missing/None value."""
    with_field = [(k, r) for k, r in recs if f in r]
    numeric = [(k, r) for k, r in with_field if isinstance(r[f], int | float) and not isinstance(r[f], bool)]
    out: list[tuple[Any, dict[str, Any]]] = []
    if numeric:
        out += [min(numeric, key=lambda kr: kr[1][f]), max(numeric, key=lambda kr: kr[1][f])]
    seen: list[Any] = []
    for k, r in with_field:
        v = r[f]
        if (isinstance(v, bool) or v is None or (isinstance(v, str) and len(v) <= 40)) and v not in seen:
            seen.append(v)
            out.append((k, r))
    return out[:6]


def plan_tools(tools: list[ToolSchema], state: dict[str, Any], effects: ClassEffects | None) -> list[ToolPlan]:
    """`state` is the loaded state as the sandbox reports it; the plans read it as the class holds it
    (`plan_view`: type markers restored), so a set's members, not the marker's keys, are the users."""
    state = plan_view(state)
    sets = record_sets(state)
    return [ToolPlan(t, state, sets, effects) for t in tools]
