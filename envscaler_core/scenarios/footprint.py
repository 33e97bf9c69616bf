"""A task's footprint, and the changes a trajectory makes outside it (`collateral_changes`).

The checks only test the changes the task wants: an agent that never read the task and revoked every
grant, then granted every patient x provider pair, passed them all and was kept as SFT data (outside
check rt9-A, F3). tau-bench compares the whole final database with the gold one; the factory has the
same material in a verified scenario: its reference solution and the states its calls leave. The paths
that solution's calls change are the task's footprint; a trajectory's changed paths that are neither in
it nor under one of its paths are collateral.

Changed paths are every path any call changed (`ChangeLog`: each call's before -> after, unioned), not the
net change: an agent that paused two other patients' reminders and resumed them before it ended had no
net change there and was kept as SFT data (outside check rt10-A, F3). The footprint is computed the same
way from the reference solution's calls.

Paths are JSON Pointers. An added or removed dict entry is one path (its key), so creating the same
record as the reference under the same generated id (`/grants/G-004`) is inside the footprint whatever
its fields; a changed leaf is its own path (`/grants/G-002/status`). A list element is named by content,
never by index (index by index, the reference's removal of E1 from [E1..E4] claimed `/queue/0/*` ..
`/queue/3`, so an agent that also handed E2-E4 to someone else had no collateral: rt10-A, F2). When every
element of both lists is a record with one id-like key (`id`, else the first in sorted order of the keys
ending in `_id`, `Id` or `ID`) holding distinct strings or integers, an element is `[key=JSON value]`
(`/queue/[id="E2"]/owner`), aligned by that key, and a field changed inside it is a path under it;
otherwise an element is `[canonical JSON]` (`/tags/["a"]`; over 60 characters, `[sha256:<16 hex>]`). The
lists are aligned as sequences of those names: a removal or an insertion names the element it removes or
inserts, none it shifts, and a moved element names itself (past ALIGN_LIMIT they are compared as
multisets, and a mere reorder is the list's own path). A record or list without such a key that a call
replaced where it stood was edited in place: the changes inside it are paths under its name, as for a
keyed record. `/` and `~` in a name are escaped as in any JSON Pointer segment.

A name is what the element was when the episode started (or when a call added it), carried through every
in-place edit (`ChangeLog`): named by its content at each step, a record the plan edits `date` then
`taken` on got a new name per intermediate content, and an agent making the same two edits in the other
order, or in one call, had collateral changes (rt11-A F3). Equal elements are counted apart: the k-th of
them is `<name>#k` (the first is plain `<name>`), and whichever of them a call removes or changes, the
last copy goes: releasing either of two equal holds names `.../[...]#2`, releasing both names two paths
(one name for all copies let an agent release both, or append four where the plan appended one: rt11-A
F2). An element a call added keeps the name it had then: one added and then edited is not the plan's
element added as it ended. A footprint recorded under an earlier naming (`FOOTPRINT_SCHEME`) is derived
again from the reference solution. Reads change nothing, so they add no path. What a trajectory does
*inside* the footprint is the checks' business, not this guard's.
"""

from __future__ import annotations

import difflib
import hashlib
import json
from collections import Counter
from typing import Any

from envscaler_core.json_equal import same_json
from envscaler_core.models.changes import pointer_token

FOOTPRINT_SCHEME = 2
"""How a recorded footprint names paths (`Scenario.footprint_scheme`); one recorded under another scheme
is derived again from the reference solution (1: list indices, rt10-A F2, or every equal element under
one name and each record under its content at each step, rt11-A F2/F3)."""
MAX_PATHS = 1000
"""Paths collected at most (a state that changed everywhere needs no more to be refused)."""
SHOWN_PATHS = 5
"""Collateral paths kept on a trajectory (the count is exact up to MAX_PATHS)."""
LONGEST_NAME = 60
"""A list element whose canonical JSON is longer is named by its digest (paths stay readable)."""
ALIGN_LIMIT = 250_000
"""Past this many element pairs (the differing middles' lengths multiplied) two lists are compared as
multisets of names, order aside: a sequence alignment is quadratic at worst, and an agent's list is
the agent's to make long (a 50,000-element list reversed would take minutes of host time)."""


def _record_key(old: list[Any], new: list[Any]) -> str | None:
    """The id-like key naming the records of both lists, or None when they are not all such records."""
    if not (old or new) or not all(isinstance(e, dict) for e in (*old, *new)):
        return None
    first = (old or new)[0]
    candidates = sorted((k for k in first if _id_like(k)), key=lambda k: (k != "id", k))
    for key in candidates:
        if all(_distinct_ids(side, key) for side in (old, new)):
            return key
    return None


def _id_like(key: str) -> bool:
    return key == "id" or key.endswith(("_id", "Id", "ID"))


def _distinct_ids(records: list[dict[str, Any]], key: str) -> bool:
    values = [r.get(key) for r in records]
    if not all(isinstance(v, (str, int)) and not isinstance(v, bool) for v in values):
        return False
    return len({(type(v), v) for v in values}) == len(values)


_JSON = json.JSONEncoder(ensure_ascii=False).encode
_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str).encode


def _element_name(element: Any, key: str | None) -> str:
    """An element's path segment: stable wherever it sits in the list, so the same in footprint and trajectory."""
    if key is not None:
        value = element[key]
        return pointer_token(f"[{key}={value if isinstance(value, int) else _JSON(value)}]")
    text = _CANONICAL(element)
    if len(text) > LONGEST_NAME:
        text = "sha256:" + hashlib.sha256(text.encode()).hexdigest()[:16]
    return pointer_token(f"[{text}]")


class _Node:
    """What a log knows of one value's element names: its dict entries' (`fields`) and, for a list, its
    elements' (`slots`; None until a change reaches the list: till then every element is what it was at
    the start, so its content names it). Fresh for a value the episode added."""

    __slots__ = ("fields", "slots")

    def __init__(self) -> None:
        self.fields: dict[str, _Node] = {}
        self.slots: list[_Slot] | None = None


class _Slot:
    """One list element's name: `base` is what the element was at the start (or when a call added it),
    whatever it became since; `copy` tells equal elements of one base apart (1 for the first)."""

    __slots__ = ("base", "copy", "node")

    def __init__(self, base: str, copy: int, node: _Node | None = None) -> None:
        self.base, self.copy, self.node = base, copy, node or _Node()

    @property
    def name(self) -> str:
        return self.base if self.copy == 1 else f"{self.base}#{self.copy}"


def _first_slots(elements: list[Any], align: _Alignment) -> list[_Slot]:
    """The names of a list's elements as they are now (`align`'s when it named them with the same key):
    the k-th of equal elements is copy k."""
    key = _record_key(elements, elements)
    names = align.old_names if key == align.key else [_element_name(e, key) for e in elements]
    seen: Counter[str] = Counter()
    slots = []
    for base in names:
        seen[base] += 1
        slots.append(_Slot(base, seen[base]))
    return slots


class _Alignment:
    """Which old element each new one is: `pairs` (old index, new index), of which `moved` old indices
    changed place; `removed` old and `inserted` new indices; `whole`: only the order changed, past
    ALIGN_LIMIT (the list's own path). `old_names`, `names`: the elements' names by content (or `key`)."""

    def __init__(self, old: list[Any], new: list[Any]) -> None:
        self.key = key = _record_key(old, new)
        self.old_names = old_names = [_element_name(e, key) for e in old]
        self.names = [_element_name(e, key) for e in new]
        self.pairs: list[tuple[int, int]] = []
        self.removed: list[int] = []
        self.inserted: list[int] = []
        self.moved: set[int] = set()
        self.whole = False
        head = 0
        while head < min(len(old), len(new)) and old_names[head] == self.names[head]:
            self.pairs.append((head, head))
            head += 1
        tail = 0
        while tail < min(len(old), len(new)) - head and old_names[-1 - tail] == self.names[-1 - tail]:
            self.pairs.append((len(old) - 1 - tail, len(new) - 1 - tail))
            tail += 1
        olds, news = old_names[head:len(old) - tail], self.names[head:len(new) - tail]
        if len(olds) * len(news) <= ALIGN_LIMIT:
            matcher = difflib.SequenceMatcher(None, olds, news, autojunk=False)
            for tag, i1, i2, j1, j2 in matcher.get_opcodes():
                shift = [(head + i, head + j) for i, j in zip(range(i1, i2), range(j1, j2))]
                # a record (or list) replaced by another where it stood, without an id: edited in place
                same = shift if tag == "equal" else [
                    (i, j) for i, j in shift if key is None and _same_kind(old[i], new[j])]
                self.pairs.extend(same)
                self.removed.extend(sorted(set(range(head + i1, head + i2)) - {i for i, _ in same}))
                self.inserted.extend(sorted(set(range(head + j1, head + j2)) - {j for _, j in same}))
            self._find_moves(old_names)
        else:
            waiting: dict[str, list[int]] = {}
            for j in reversed(range(head, len(new) - tail)):
                waiting.setdefault(self.names[j], []).append(j)
            for i in range(head, len(old) - tail):
                if waiting.get(old_names[i]):
                    self.pairs.append((i, waiting[old_names[i]].pop()))
                else:
                    self.removed.append(i)
            self.inserted.extend(j for js in waiting.values() for j in js)
            self.whole = Counter(olds) == Counter(news)

    def _find_moves(self, old_names: list[str]) -> None:
        """An element removed at one place and inserted at another under the same name moved: it keeps
        its name, and is named as changed."""
        waiting: dict[str, list[int]] = {}
        for j in reversed(self.inserted):
            waiting.setdefault(self.names[j], []).append(j)
        moves = [(i, waiting[old_names[i]].pop()) for i in self.removed if waiting.get(old_names[i])]
        self.moved = {i for i, _ in moves}
        self.pairs.extend(moves)
        self.removed = [i for i in self.removed if i not in self.moved]
        self.inserted = sorted(set(self.inserted) - {j for _, j in moves})


def _same_kind(a: Any, b: Any) -> bool:
    return (isinstance(a, dict) and isinstance(b, dict)) or (isinstance(a, list) and isinstance(b, list))


def _last_copies_leave(old: list[Any], slots: list[_Slot], leaving: set[int]) -> None:
    """Equal elements of one base are interchangeable: whichever of them a call removes or changes, the
    highest copies leave and the lowest stay, so releasing either of two equal holds names the same
    path, and releasing both names two (rt11-A F2). Reassigns `slots` among such elements."""
    bases = {slots[i].base for i in leaving}
    groups: dict[tuple[str, str], list[int]] = {}
    for i, slot in enumerate(slots):
        if slot.base in bases:
            groups.setdefault((slot.base, _CANONICAL(old[i])), []).append(i)
    for members in groups.values():
        if len(members) > 1 and any(i in leaving for i in members):
            ordered = sorted((slots[i] for i in members), key=lambda s: s.copy)
            order = [i for i in members if i not in leaving] + [i for i in members if i in leaving]
            for i, slot in zip(order, ordered):
                slots[i] = slot


def _list_changes(old: list[Any], new: list[Any], path: str, node: _Node, out: set[str],
                  work: list[tuple[Any, Any, str, _Node]]) -> None:
    """Name the changed elements of a list by their slots; records changed in place are walked."""
    align = _Alignment(old, new)
    if node.slots is None:
        node.slots = _first_slots(old, align)
    slots = node.slots
    if align.whole:
        out.add(path)
    changed = [(i, j) for i, j in align.pairs if i in align.moved or not same_json(old[i], new[j])]
    _last_copies_leave(old, slots, set(align.removed) | {i for i, _ in changed})
    out.update(f"{path}/{slots[i].name}" for i in align.removed)
    kept: list[_Slot | None] = [None] * len(new)
    for i, j in align.pairs:
        kept[j] = slots[i]
    for i, j in changed:
        slot = slots[i]
        if i in align.moved:
            out.add(f"{path}/{slot.name}")
            slot.node = slot.node if same_json(old[i], new[j]) else _Node()
        else:
            work.append((old[i], new[j], f"{path}/{slot.name}", slot.node))
    taken = {(s.base, s.copy) for s in kept if s is not None}
    for j in align.inserted:
        copy = 1
        while (align.names[j], copy) in taken:
            copy += 1
        taken.add((align.names[j], copy))
        kept[j] = _Slot(align.names[j], copy)
        out.add(f"{path}/{kept[j].name}")
    node.slots = [s for s in kept if s is not None]


def _changes(before: Any, after: Any, root: _Node, out: set[str]) -> bool:
    """Add to `out` the paths where `after` differs from `before`, naming list elements by `root`'s
    slots (and updating them); False when MAX_PATHS cut the walk short (`root` is then half-updated)."""
    work: list[tuple[Any, Any, str, _Node]] = [(before, after, "", root)]
    while work:
        if len(out) >= MAX_PATHS:
            return False
        old, new, path, node = work.pop()
        if same_json(old, new):
            continue
        if isinstance(old, dict) and isinstance(new, dict):
            for k in (*(k for k in old if k not in new), *(k for k in new if k not in old)):
                out.add(f"{path}/{pointer_token(str(k))}")
                node.fields.pop(k, None)
            work.extend((old[k], new[k], f"{path}/{pointer_token(str(k))}", node.fields.setdefault(k, _Node()))
                        for k in old if k in new)
        elif isinstance(old, list) and isinstance(new, list):
            _list_changes(old, new, path, node, out, work)
        else:
            out.add(path)
            node.fields, node.slots = {}, None
    return True


def changed_paths(before: Any, after: Any) -> list[str]:
    """The paths (module doc) where `after` differs from `before`, sorted, each once (at most MAX_PATHS)."""
    out: set[str] = set()
    _changes(before, after, _Node(), out)
    return sorted(out)[:MAX_PATHS]


class ChangeLog:
    """Every path an episode's calls changed: each call's own change (the state before it -> after it),
    unioned, so a change undone by a later call still counts (rt10-A F3). Feed it each call's state. It
    keeps each list element's name from the start through the calls (`_Node`), so the same end change
    reached in another order or in other steps names the same paths (rt11-A F3)."""

    def __init__(self, loaded: dict[str, Any]) -> None:
        self._last = loaded
        self._paths: set[str] = set()
        self._names = _Node()
        self._full = False

    def saw(self, state: dict[str, Any]) -> None:
        """The state after a call (or at the end): its changes since the last state seen are added."""
        if not self._full and not same_json(self._last, state):
            self._full = not _changes(self._last, state, self._names, self._paths)
        self._last = state

    @property
    def paths(self) -> list[str]:
        return sorted(self._paths)[:MAX_PATHS]


def collateral(footprint: list[str], changed: list[str]) -> list[str]:
    """The `changed` paths (a `ChangeLog`'s) that the footprint does not cover: a path is covered when it is
    a footprint path or lies under one (a field of a record the reference added)."""
    allowed = set(footprint)
    return [p for p in changed if not _covered(p, allowed)]


def _covered(path: str, allowed: set[str]) -> bool:
    probe = path
    while True:
        if probe in allowed:
            return True
        if not probe:
            return False
        probe = probe.rsplit("/", 1)[0]
