"""The one rule every value entering the sandbox meets on the host, before anything is built from it.

The wire carries 64-bit integers (`jail_json` refuses wider ones in replies); the same bound applies to
what the host takes in: tool schemas (enum, const, bounds, any keyword), call arguments on every path, and
states and EnvScaler marker configs at import and validate. Besides keeping the doc's promise, the bound
is what keeps sets and dicts of integers cheap: Python hashes an int as its value modulo 2^61-1, so
unbounded integers let anyone choose thousands that share one hash, and every set built from them costs
time quadratic in its size (red team 7, F1/F2: a 10,000-member enum made every call cost the host seconds).
Within 64 bits at most nine integers share a hash.

The walk is iterative (no recursion, no generator per node), counts nodes, and names where the first
problem sits as a JSON Pointer under the caller's `where`.
"""

from __future__ import annotations

from typing import Any

MIN_INT, MAX_INT = -(1 << 63), (1 << 63) - 1

MAX_STATE_VALUES = 50_000
"""Most values (containers and scalars; keys not counted) in one state or result the host holds, and in a
config it restores EnvScaler's markers from: the host's memory grows with values, not characters (red team
7, F5: a 1 MB state of 250,000 empty lists made validation peak at 1 GB of host RSS)."""


def _pointer(parents: dict[int, tuple[int, str]], at: int, where: str) -> str:
    """The JSON Pointer of stack entry `at`, rebuilt from its parents only when a problem is reported."""
    parts: list[str] = []
    while at in parents:
        at, token = parents[at]
        parts.append(token.replace("~", "~0").replace("/", "~1"))
    return where + ("/" + "/".join(reversed(parts)) if parts else "")


def value_problem(value: Any, where: str, *, max_depth: int | None = None, max_nodes: int | None = None) -> str | None:
    """Why `value` may not enter the sandbox (naming where, e.g. `file_claim/amount`), or None.

    Refuses integers outside the signed 64-bit range, nesting deeper than `max_depth` and more than
    `max_nodes` values (containers and scalars; keys are not counted). Its own cost is one step per node:
    a container reached again through another path (a Python-built schema sharing one sub-schema between
    branches) is walked again only if reached deeper than before, so sharing costs no more than the tree of
    distinct objects (a 24-level union of two branches sharing one schema took 2^24 steps: 117 s)."""
    seen: dict[int, int] = {}  # id of a container walked -> the shallowest depth it was walked at
    nodes = 0
    work: list[tuple[Any, int, int]] = [(value, 1, 0)]  # (value, depth, its id in `parents`)
    parents: dict[int, tuple[int, str]] = {}
    next_id = 1
    while work:
        item, depth, me = work.pop()
        nodes += 1
        if max_nodes is not None and nodes > max_nodes:
            return f"{where}: more than {max_nodes:,} values (the most the host holds of one value)"
        kind = type(item)
        if kind is int or (isinstance(item, int) and not isinstance(item, bool)):
            if not MIN_INT <= item <= MAX_INT:
                return (f"{_pointer(parents, me, where)}: integer of {int.bit_length(item):,} bits is outside the "
                        "64-bit range (the wire carries 64-bit integers)")
            continue
        if kind is dict or isinstance(item, dict):
            children: Any = dict.items(item)
        elif kind is list or isinstance(item, (list, tuple)):
            children = enumerate(item)
        else:
            continue
        if max_depth is not None and depth > max_depth:
            return f"{_pointer(parents, me, where)}: nested more than {max_depth} levels deep"
        if seen.get(id(item), depth + 1) <= depth:
            continue
        seen[id(item)] = depth
        for key, child in reversed(list(children)):  # reversed: the first problem in document order is named
            if type(child) in (str, float, bool) or child is None:  # leaves: counted, nothing to check
                nodes += 1
                if max_nodes is not None and nodes > max_nodes:
                    break
                continue
            parents[next_id] = (me, str(key))
            work.append((child, depth + 1, next_id))
            next_id += 1
    if max_nodes is not None and nodes > max_nodes:
        return f"{where}: more than {max_nodes:,} values (the most the host holds of one value)"
    return None
