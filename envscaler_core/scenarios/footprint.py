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
otherwise an element is `[canonical JSON]` (`/tags/["a"]`; over 60 characters, `[sha256:<16 hex>]`), so
a changed element is its old name and its new one. The lists are aligned as sequences of those names: a
removal or an insertion names the element it removes or inserts, none it shifts, and a moved element
names itself (past ALIGN_LIMIT they are compared as multisets, and a mere reorder is the list's own
path). `/` and `~` in a name are escaped as in any JSON Pointer segment. A footprint recorded before,
with list indices, is derived again (`names_list_indices`). Reads change nothing, so they add no path.
What a trajectory does *inside* the footprint is the checks' business, not this guard's.
"""

from __future__ import annotations

import difflib
import hashlib
import json
from collections import Counter
from typing import Any

from envscaler_core.json_equal import same_json
from envscaler_core.models.changes import pointer_key, pointer_token

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


def _list_changes(old: list[Any], new: list[Any], path: str, out: list[str],
                  work: list[tuple[Any, Any, str]]) -> None:
    """Align two lists by element name: unmatched names are changed paths; matched records are walked."""
    key = _record_key(old, new)
    old_names = [_element_name(e, key) for e in old]
    new_names = [_element_name(e, key) for e in new]
    same: list[tuple[int, int]] = []  # (old index, new index) of the elements matched by name
    head = 0
    while head < min(len(old), len(new)) and old_names[head] == new_names[head]:
        same.append((head, head))
        head += 1
    tail = 0
    while tail < min(len(old), len(new)) - head and old_names[-1 - tail] == new_names[-1 - tail]:
        same.append((len(old) - 1 - tail, len(new) - 1 - tail))
        tail += 1
    olds, news = old_names[head:len(old) - tail], new_names[head:len(new) - tail]
    if len(olds) * len(news) <= ALIGN_LIMIT:
        matcher = difflib.SequenceMatcher(None, olds, news, autojunk=False)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            if tag == "equal":
                same.extend((head + i, head + j) for i, j in zip(range(i1, i2), range(j1, j2)))
            else:
                out.extend(f"{path}/{name}" for name in (*olds[i1:i2], *news[j1:j2]))
    else:
        left, right = Counter(olds), Counter(news)
        out.extend(f"{path}/{name}" for name in ((left - right) + (right - left)))
        if left == right:  # only the order changed: the list as a whole
            out.append(path)
        where = {name: head + j for j, name in enumerate(news)}
        same.extend((head + i, where[name]) for i, name in enumerate(olds) if key is not None and name in where)
    if key is not None:  # the same record: its fields may differ
        work.extend((old[i], new[j], f"{path}/{old_names[i]}") for i, j in same)


def changed_paths(before: Any, after: Any) -> list[str]:
    """The paths (module doc) where `after` differs from `before`, sorted, each once (at most MAX_PATHS)."""
    out: list[str] = []
    work: list[tuple[Any, Any, str]] = [(before, after, "")]
    while work and len(out) < MAX_PATHS:
        old, new, path = work.pop()
        if same_json(old, new):
            continue
        if isinstance(old, dict) and isinstance(new, dict):
            out.extend(f"{path}/{pointer_token(str(k))}" for k in old if k not in new)
            out.extend(f"{path}/{pointer_token(str(k))}" for k in new if k not in old)
            work.extend((old[k], new[k], f"{path}/{pointer_token(str(k))}") for k in old if k in new)
        elif isinstance(old, list) and isinstance(new, list):
            _list_changes(old, new, path, out, work)
        else:
            out.append(path)
    return sorted(set(out))[:MAX_PATHS]


def names_list_indices(footprint: list[str], state: Any) -> bool:
    """Whether `footprint` was recorded before list elements were named by content (rt10-A F2): one of its
    paths steps into a list of `state` (the scenario's initial state) by index. Such a footprint is
    derived again from the reference solution (`verify.reference_footprint`) instead of being believed."""
    for path in footprint:
        node = state
        for raw in path.split("/")[1:]:
            segment = pointer_key(raw)
            if isinstance(node, list):
                if segment.isdigit():
                    return True
                break
            if not isinstance(node, dict) or segment not in node:
                break
            node = node[segment]
    return False


class ChangeLog:
    """Every path an episode's calls changed: each call's own change (the state before it -> after it),
    unioned, so a change undone by a later call still counts (rt10-A F3). Feed it each call's state."""

    def __init__(self, loaded: dict[str, Any]) -> None:
        self._last = loaded
        self._paths: set[str] = set()

    def saw(self, state: dict[str, Any]) -> None:
        """The state after a call (or at the end): its changes since the last state seen are added."""
        if len(self._paths) < MAX_PATHS and not same_json(self._last, state):
            self._paths.update(changed_paths(self._last, state))
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
