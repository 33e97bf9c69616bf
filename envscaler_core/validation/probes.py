"""Schema- and code-driven probe calls, no LLM: what the programmatic pass tries on each tool.

A probe is worth something only if it reaches the code it means to test. So, per tool:

* **positive** candidates: argument sets built from values that exist in the test state, found where
  the method looks them up (`self.items[item_id]` -> keys of `items`), under fields of the same name,
  in containers named like the parameter, and, for tools that create things, a fresh id in the
  state's own style. They are tried best first until the env accepts one (a refused positive means the
  probe never reached the code, not that the tool passed);
* **edge** calls: existing records whose fields the method's conditions read take every value the
  state offers (the book with no copies left, the cancelled appointment), so guarded branches fire;
* **optional**: the accepted call again with the tool's optional parameters filled too, with values
  drawn as required ones are (a query may write only when given one: `get_book(book_id, member="")`);
* **missing**: an id parameter pointing at nothing, shaped like the state's own ids (ordinary strings
  such as names or titles are never probed as missing ids);
* **boundary**: out-of-range numbers.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel

from envscaler_core.models.env import ToolSchema
from envscaler_core.models.validation import CaseType
from envscaler_core.validation.class_effects import ClassEffects
from envscaler_core.validation.code_effects import Binding
from envscaler_core.validation.dict_params import object_candidates
from envscaler_core.validation.param_options import EDGES_PER_PARAM, ParamOptions, keyword_candidates, param_options, typed_values
from envscaler_core.validation.state_values import (
    RecordSet, dedup, is_scalar, linked_values, missing_value, nodes_at, plan_view, record_sets,
)
from envscaler_core.validation.tool_kinds import words

MAX_POSITIVE_ATTEMPTS = 8
MAX_HINTS = 4
"""Argument sets from outside (an import's reference solutions) tried per tool."""
MAX_EDGES = 6
MAX_OPTIONAL = 2  # probes filling a tool's optional parameters: their first values, then their second ones
TOGETHER_PER_GROUP = 4
CREATE_VERBS = frozenset({"add", "create", "register", "new", "insert", "open", "issue", "submit", "enroll",
                          "enrol", "book", "reserve", "schedule", "log", "record", "post", "upload", "import",
                          "file", "make", "place", "put", "save", "store", "join", "invite", "assign"})
Purpose = Literal["positive", "edge", "optional", "missing", "boundary", "sequence"]


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


class ToolPlan:
    """Everything the programmatic pass will try on one tool."""

    def __init__(self, tool: ToolSchema, state: dict[str, Any], sets: list[RecordSet],
                 effects: ClassEffects | None, hints: list[dict[str, Any]] | None = None) -> None:
        self.tool = tool.function.name
        self.hints = [h for h in hints or [] if isinstance(h, dict)][:MAX_HINTS]
        """Argument sets meant for this tool (an import's reference solutions call it so, and EnvScaler's runtime
        runs them): tried right after the best generated set, so a tool whose accepted arguments no rule
        here derives (a key only its code allows) is still reached (outside check rt22-R13, F1)."""
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
        self.optional = {n: param_options(n, props[n], state, sets, bindings.get(n, []), self.creates, literals.get(n),
                                          near) for n in props if n not in required}
        """Parameters the schema does not require (a defaulted one: every imported EnvScaler tool has them),
        kept apart from `options`: positives, edges and missing ids are built from the required ones."""
        self.state = state
        fn = effects.methods.get(self.tool) if effects else None
        for opt in [*self.options.values(), *self.optional.values()]:
            if opt.kind == "object":  # the keys its code accepts first (`dict_params`; rt22-R13 F1)
                opt.values = dedup(object_candidates(opt.name, fn, effects.typed_dicts if effects else {},
                                                     self.options, sets, state) + opt.values)
        self.keywords = keyword_candidates(self.options, sets, fn, set(props)) \
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
        if self.hints:
            out = out[:1] + [h for h in self.hints if h not in out[:1]] + [a for a in out[1:] if a not in self.hints]
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
        return [{n: (typed_values([v], self.options[n].kind) or [v])[0] for n, v in e.items()} for e in out]

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
            preferred = typed_values([v for b in opt.bindings for v in linked_values(self.state, b, narrowing)], opt.kind)
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
        return typed_values(out, self.options[name].kind)

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
                    key = typed_values([key], opt.kind)
                    if key and all(key[0] != k for k, _ in picks):
                        picks.append((key[0], f"{'/'.join(rs.path)}/{key[0]}: {f}={rec.get(f)!r}"))
        return picks

    def optionals(self, base: dict[str, Any]) -> list[Probe]:
        """`base` with every optional parameter filled too: their first values, then their second ones
        (the other side of a flag). Only the required ones were ever sent before, so a query writing
        state when given its optional argument passed (sandbox red team 8, F1a)."""
        out: list[Probe] = []
        for rank in range(MAX_OPTIONAL):
            filled = {n: o.values[min(rank, len(o.values) - 1)] for n, o in self.optional.items() if o.values}
            args = {**base, **filled}
            if filled and all(p.args != args for p in out):
                out.append(Probe(tool=self.tool, args=args, case_type="positive", purpose="optional",
                                 note=", ".join(f"{n}={v!r}" for n, v in filled.items())))
        return out

    def missing(self, base: dict[str, Any]) -> list[Probe]:
        """A missing id per reference parameter, shaped like the state's ids (`missing_value`), except
        where the accepted call already used a value the state does not hold (a creation: there a
        'missing' id is simply the next new one)."""
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


def plan_tools(tools: list[ToolSchema], state: dict[str, Any], effects: ClassEffects | None,
               hints: dict[str, list[dict[str, Any]]] | None = None) -> list[ToolPlan]:
    """`state` is the loaded state as the sandbox reports it; the plans read it as the class holds it
    (`plan_view`: type markers restored), so a set's members, not the marker's keys, are the users.
    `hints`: per tool, argument sets meant for it (`ToolPlan.hints`)."""
    state = plan_view(state)
    sets = record_sets(state)
    return [ToolPlan(t, state, sets, effects, (hints or {}).get(t.function.name, [])) for t in tools]
