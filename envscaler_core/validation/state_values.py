"""Where a test state keeps the values a tool's parameters can take.

Real classes keep records as dicts keyed by id with no id field inside (`{"items": {"t1": {...}}}`),
as lists of records with an `id` field, under differently named fields (`book_id` parameter, `id`
field, key of `books`), and nested (`hospitals/*/wards`). Probes need existing values to reach the
code behind "not found" guards, a value that exists nowhere for the missing-id case, and records whose
fields make a rule fire (a book with no copies left).
"""

from __future__ import annotations

import datetime
import decimal
import re
from collections import Counter
from typing import Any

from envscaler_core.validation.code_effects import Binding, Path
from envscaler_core.wire_values import MAX_INT, MIN_INT

Scalar = str | int | float | bool
_ID_LIKE = re.compile(r"(^|_)(id|ids|key|code|sku|isbn|uuid|number|no|ref|username|handle|email|slug)$", re.I)
_SEQUENCE = re.compile(r"^(.*?)(\d+)$")
MISSING_ID = "__missing_id__"
MAX_SHAPED_SOURCES = 4  # real ids whose shape a missing id copies (that every one-character change of each is held is unlikely)
SKIP_ATTRS = frozenset({"init_config"})  # EnvScaler classes store their config: a copy, not a place to look


def plan_view(state: Any) -> Any:
    """The state as the class holds it, in a form the planner can walk: EnvScaler's type markers
    restored (a config's `{"__type__": "set", ...}` is a set in the class, not a dict with the keys
    `__type__` and `items`), then sets and tuples as lists, datetimes as ISO text and Decimals as
    numbers (what a JSON argument can carry); tuple keys stay tuples (`Binding.part` reads them).
    A state without markers is returned as it is."""
    from envscaler_core.interop.jail_side import restore_markers
    from envscaler_core.interop.sandboxed import has_markers

    if not has_markers(state):
        return state
    try:
        restored = restore_markers(state)
    except (TypeError, ValueError, ArithmeticError):
        return state  # a broken marker: the class could not have loaded it; plan from the text
    return _plain(restored)


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {_plain_key(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, set | frozenset):
        members = [_plain(v) for v in value]
        try:
            return sorted(members)
        except TypeError:
            return sorted(members, key=repr)
    if isinstance(value, datetime.datetime | datetime.date):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return float(value) if value.is_finite() else str(value)
    return value


def _plain_key(key: Any) -> Any:
    if isinstance(key, tuple):
        return tuple(_plain_key(k) for k in key)
    return _plain(key) if isinstance(key, datetime.datetime | datetime.date | decimal.Decimal) else key


def is_scalar(value: Any) -> bool:
    return isinstance(value, str | int | float | bool) and value is not None


def id_like(name: Any) -> bool:
    """A key named like an id. A restored state's keys need not be strings (EnvScaler's dict markers bring
    back tuple and int keys: rt12-C F5, a nested one ended the env's audit): those are no field names."""
    return isinstance(name, str) and (bool(_ID_LIKE.search(name)) or name.lower().endswith("id"))


def stem(param: str) -> str:
    """`book_id` -> `book`, `new_slot` -> `slot`, `patientId` -> `patient`."""
    base = re.sub(r"(?i)_?(id|ids|key|code)$", "", param.removeprefix("new_"))
    return base.rstrip("_").lower()


def nodes_at(state: Any, path: Path) -> list[Any]:
    """Every value at `path` ("*" = any key of a dict or item of a list)."""
    current = [state]
    for step in path:
        following: list[Any] = []
        for node in current:
            if step == "*":
                if isinstance(node, dict):
                    following += list(node.values())
                elif isinstance(node, list):
                    following += node
            elif isinstance(node, dict) and step in node:
                following.append(node[step])
        current = following
    return current


def members(node: Any) -> list[Scalar]:
    """A dict's keys, or a list's scalar items."""
    if isinstance(node, dict):
        return [k for k in node if is_scalar(k)]
    if isinstance(node, list):
        return [v for v in node if is_scalar(v)]
    return []


def parts(node: Any, part: int) -> list[Scalar]:
    """Component `part` of a container's tuple members: keys `(1, 2)` of a dict, pairs in a list."""
    items = list(node) if isinstance(node, dict | list) else []
    return [m[part] for m in items if isinstance(m, tuple | list) and len(m) > part and is_scalar(m[part])]


def binding_values(state: dict[str, Any], binding: Binding) -> list[Scalar]:
    """The values a code binding points at: members of a container, or the values of a field."""
    out: list[Scalar] = []
    for node in nodes_at(state, binding.path):
        if binding.part is not None:
            out += parts(node, binding.part)
        elif not binding.values:
            out += members(node)
        elif is_scalar(node):
            out.append(node)
        elif isinstance(node, list):
            out += [v for v in node if is_scalar(v)]
    return dedup(out)


def linked_values(state: dict[str, Any], binding: Binding, linked: set[Any]) -> list[Scalar]:
    """The binding's values under records whose keys are `linked` (a wildcard over a dict goes only
    through linked keys where it has any); [] when no wildcard could be narrowed."""
    out: list[Scalar] = []

    def walk(node: Any, i: int, narrowed: bool) -> None:
        if i == len(binding.path):
            if narrowed:
                out.extend(binding_values({"_": node}, Binding(("_",), binding.values, binding.part)))
            return
        step = binding.path[i]
        if step != "*":
            if isinstance(node, dict) and step in node:
                walk(node[step], i + 1, narrowed)
            return
        if isinstance(node, dict):
            hits = [k for k in node if k in linked]
            for k in hits or list(node):
                walk(node[k], i + 1, narrowed or bool(hits))
        elif isinstance(node, list):
            for item in node:
                walk(item, i + 1, narrowed)

    walk(state, 0, False)
    return dedup(out)


def values_under(state: Any, key: str, skip_top: frozenset[str] = SKIP_ATTRS) -> list[Scalar]:
    """Scalars stored under field `key` anywhere in the state, in document order."""
    found: list[Scalar] = []

    def walk(node: Any, top: bool) -> None:
        if isinstance(node, dict):
            for k, v in node.items():
                if top and k in skip_top:
                    continue
                if k == key and is_scalar(v):
                    found.append(v)
                elif k == key and isinstance(v, list):
                    found.extend(x for x in v if is_scalar(x))
                walk(v, False)
        elif isinstance(node, list):
            for v in node:
                walk(v, False)

    walk(state, True)
    return dedup(found)


class RecordSet:
    """Records found at one path: dicts keyed by id, or lists of records (named by their id field).
    Each record remembers the keys of the records it sits in (`parents`: the building of a room)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.records: list[tuple[Scalar | None, dict[str, Any]]] = []
        self.parents: list[tuple[Any, ...]] = []
        self.id_field: str | None = None

    def add(self, key: Scalar | None, record: dict[str, Any], parents: tuple[Any, ...]) -> None:
        self.records.append((key, record))
        self.parents.append(parents)

    def finish(self) -> RecordSet:
        self.id_field = _id_field([r for _, r in self.records])
        return self

    @property
    def name(self) -> str:
        return next((s for s in reversed(self.path) if s != "*"), "")

    def ids(self) -> list[Scalar]:
        return dedup([k for k, _, _ in self.keyed_records()])

    def keyed_records(self) -> list[tuple[Scalar, dict[str, Any], tuple[Any, ...]]]:
        """(how a tool names the record, record, parent keys): its key, else its id field's value."""
        out = []
        for (key, record), parents in zip(self.records, self.parents):
            if key is None and self.id_field:
                key = record.get(self.id_field)
            if key is not None and is_scalar(key):
                out.append((key, record, parents))
        return out


def record_sets(state: dict[str, Any], max_depth: int = 4) -> list[RecordSet]:
    """Every container of records (dict of dicts, list of dicts) in the state, outermost first; the
    containers at one path (the rooms of every building) form one set."""
    sets: dict[Path, RecordSet] = {}

    def walk(node: Any, path: Path, parents: tuple[Any, ...], depth: int) -> None:
        if depth > max_depth:
            return
        if isinstance(node, dict):
            values = list(node.values())
            if values and all(isinstance(v, dict) for v in values) and path:
                rs = sets.setdefault(path, RecordSet(path))
                for k, v in node.items():
                    rs.add(k, v, parents)
                    walk(v, path + ("*",), parents + (k,), depth + 1)
                return
            for k, v in node.items():
                if not path and k in SKIP_ATTRS:
                    continue
                walk(v, path + (str(k),), parents, depth + 1)
        elif isinstance(node, list) and node and all(isinstance(v, dict) for v in node) and path:
            rs = sets.setdefault(path, RecordSet(path))
            for v in node:
                rs.add(None, v, parents)
            for v in node:
                walk(v, path + ("*",), parents, depth + 1)

    walk(state, (), (), 0)
    return [rs.finish() for rs in sets.values()]


def _id_field(records: list[dict[str, Any]]) -> str | None:
    if not records:
        return None
    common = set(records[0]).intersection(*records[1:])
    candidates = [f for f in common if id_like(f) and all(is_scalar(r[f]) for r in records)
                  and len({r[f] for r in records}) == len(records)]
    return min(candidates, key=lambda f: (f.lower() != "id", len(f))) if candidates else None


def sets_for_param(param: str, sets: list[RecordSet]) -> list[RecordSet]:
    """Record containers a parameter probably points into, by name: `book_id` -> `books`, `book`."""
    s = stem(param)
    if not s:
        return []
    out = []
    for rs in sets:
        name = rs.name.lower()
        if name in (s, s + "s", s + "es") or name.rstrip("s") == s or (len(s) > 3 and name.startswith(s)):
            out.append(rs)
    return out


def fresh_id(existing: list[Scalar]) -> Scalar:
    """An id in the style of the existing ones that none of them uses (`T-007` -> `T-008`)."""
    ints = [v for v in existing if isinstance(v, int) and not isinstance(v, bool)]
    if ints:
        return max(ints) + 1
    strings = [str(v) for v in existing]
    sequences = [(m.group(1), int(m.group(2)), len(m.group(2))) for t in strings if (m := _SEQUENCE.match(t))]
    if sequences:
        prefix = Counter(p for p, _, _ in sequences).most_common(1)[0][0]
        width = max(w for p, _, w in sequences if p == prefix)
        number = max(n for p, n, _ in sequences if p == prefix) + 1
        while f"{prefix}{number:0{width}d}" in strings:
            number += 1
        return f"{prefix}{number:0{width}d}"
    candidate = f"{strings[0]}-new" if strings else "new-1"
    while candidate in strings:
        candidate += "x"
    return candidate


_ISO = re.compile(r"^(\d{4}-\d{2}-\d{2})([T ]\d{2}:\d{2}(:\d{2})?)?$")
_LATER = re.compile(r"due|end|until|expir|to$|new_|return|finish|deadline", re.I)


def later_dates(state: dict[str, Any], param: str) -> list[str]:
    """A date after every date in the state, in the style of the parameter's own values (date or
    date-time): new enough for "after the current due date" and for "nothing logged that day yet".
    Parameters that name an end (`due_date`, `end`) get a later one than those that name a start."""
    found: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)
        elif isinstance(node, str) and _ISO.match(node):
            found.append(node)

    walk(state)
    latest = max((m.group(1) for v in found if (m := _ISO.match(v))), default="2030-01-01")
    base = datetime.date.fromisoformat(latest) + datetime.timedelta(days=21 if _LATER.search(param) else 14)
    own = [v for v in values_under(state, param.removeprefix("new_")) if isinstance(v, str) and _ISO.match(v)]
    time = _ISO.match(own[0]).group(2) if own and _ISO.match(own[0]).group(2) else ""  # type: ignore[union-attr]
    return [base.isoformat() + (time or "")]


def fresh_text(example: str) -> str:
    """A value shaped like `example` that is surely new: `ana@example.com` -> `new.ana@example.com`."""
    if "@" in example:
        return "new." + example
    return f"{example} 2"


def missing_value(existing: list[Scalar], kind: str) -> Scalar:
    """A well-typed value that names nothing in the state, shaped like the ids it holds (`B001` ->
    `B009`): a class that refuses a malformed id first (`__missing_id__` is one) must still meet an
    unknown id that passes its format check, where a refusal that writes state hides (sandbox red
    team 8, F1b). `MISSING_ID` when the state holds no id to copy the shape of."""
    if kind == "integer":
        return missing_int([v for v in existing if isinstance(v, int) and not isinstance(v, bool)])
    return shaped_missing_id([str(v) for v in existing if is_scalar(v) and not isinstance(v, bool)]) or MISSING_ID


def missing_int(held: list[int]) -> int:
    """An integer no id of the state is, next to a real one and with as many digits (`7` -> `8`, `1042` ->
    `1043`), inside 64 bits: a class checking an id's range or length first must still meet it, and the
    sandbox refuses wider integers, so `largest + 1000` once sent no probe at all for an id of 2**63 - 1
    (sandbox red team 9, F3). 1000 for a state holding no integer id."""
    if not held:
        return 1000
    taken = set(held)
    for real in sorted(taken, reverse=True)[:MAX_SHAPED_SOURCES]:
        for near in (real + 1, real - 1):
            if (near not in taken and MIN_INT <= near <= MAX_INT and (near < 0) == (real < 0)
                    and len(str(abs(near))) == len(str(abs(real)))):
                return near
    return next(n for n in range(len(taken) + 1) if n not in taken)


_ALPHABETS = ("9876543210", "fedcba9876543210", "FEDCBA9876543210", "zyxwvutsrqponmlkjihgfedcba",
              "ZYXWVUTSRQPONMLKJIHGFEDCBA", "ZYXWVUTSRQPONMLKJIHGFEDCBAzyxwvutsrqponmlkjihgfedcba")
"""Narrowest first: a position where the state's ids hold digits and hex letters (a UUID's) takes a hex
character, so the changed id keeps its format; a position holding no digit takes letters only."""


def shaped_missing_id(existing: list[str]) -> str | None:
    """An id shaped like the state's that none of them is, so that a class checking an id's format first
    still takes it for a real, unknown one; None when no shape is found (also when every id of that format
    is held: `a`..`z`, `A`..`Z`). Tried in order, the length always kept: one digit or hex character
    changed, from the last one back, within the narrowest alphabet the state's ids of that length use at
    that position (`B001` -> `B009`; a UUID ending `7a1b` -> `7a1f`, not the `7a1z` that is no UUID); then a
    letter changed where the ids' letters differ, to one after theirs (`A0`..`C9` -> `D0`, not the series'
    `A10` a `[A-Z][0-9]` format refuses: rt11-B F6); then the next number of a numbered series (`B0`..`B9`
    -> `B10`, not `Z0`: one letter throughout may be the format); then any other letter changed the same
    way (sandbox red team 9, F3). A position holding no digit never takes one (`a`..`f` -> `g`, not `9`)."""
    held = set(existing)
    sources = existing[:MAX_SHAPED_SOURCES]

    def changed(pick: str) -> str | None:
        for real in sources:
            for i in reversed(range(len(real))):
                alphabet, digits_there, varies = _alphabet_at(existing, real, i)
                if pick != ("digit" if digits_there else "varying letter" if varies else "letter"):
                    continue
                if pick == "varying letter":  # from the one after the largest the ids hold: `D` for rows A..C
                    ascending = alphabet[::-1]
                    top = max(ascending.find(o[i]) for o in existing if len(o) == len(real))
                    alphabet = ascending[top + 1:] + ascending[:top + 1]
                for c in alphabet:
                    candidate = real[:i] + c + real[i + 1:]
                    if candidate not in held:
                        return candidate
        return None

    return changed("digit") or changed("varying letter") or _next_in_series(existing, held) or changed("letter")


def _alphabet_at(existing: list[str], real: str, i: int) -> tuple[str, bool, bool]:
    """The narrowest alphabet holding what the state's ids of `real`'s length have at `i` (else `real[i]`'s
    own; "" for punctuation), digit-free unless a digit is among them; whether one is (a number or hex
    position); and whether they differ there."""
    seen = {other[i] for other in existing if len(other) == len(real)} | {real[i]}
    digits = any(c.isdigit() for c in seen)
    fits = [a for a in _ALPHABETS if digits or not a[-1].isdigit()]
    alphabet = next((a for a in fits if seen <= set(a)), next((a for a in fits if real[i] in a), ""))
    return alphabet, digits, len(seen) > 1


def _next_in_series(existing: list[str], held: set[str]) -> str | None:
    """`prefix` + one more than the largest number of the ids sharing that prefix, as wide as theirs."""
    numbers: dict[str, list[str]] = {}
    for real in existing:
        if (m := _SEQUENCE.match(real)) is not None:
            numbers.setdefault(m.group(1), []).append(m.group(2))
    for prefix, digits in numbers.items():
        candidate = prefix + str(max(int(d) for d in digits) + 1).zfill(max(len(d) for d in digits))
        if candidate not in held:
            return candidate
    return None


def dedup(values: list[Any]) -> list[Any]:
    out: list[Any] = []
    for v in values:
        if not any(v == o and type(v) is type(o) for o in out):
            out.append(v)
    return out
