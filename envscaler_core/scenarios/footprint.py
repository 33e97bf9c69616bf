"""A task's footprint, and the changes a trajectory makes outside it (`collateral_changes`).

The checks only test the changes the task wants: an agent that never read the task and revoked every
grant, then granted every patient x provider pair, passed them all and was kept as SFT data (outside
check rt9-A, F3). tau-bench compares the whole final database with the gold one; the factory has the
same material in a verified scenario: its reference solution and the state it leaves. The paths that
solution changes (initial -> reference final) are the task's footprint; a trajectory's changed paths
that are neither in it nor under one of its paths are collateral.

Paths are JSON Pointers. An added or removed dict entry is one path (its key), so creating the same
record as the reference under the same generated id (`/grants/G-004`) is inside the footprint whatever
its fields; a changed leaf is its own path (`/grants/G-002/status`); lists are compared index by index,
as the sandbox's diffs are (docs/sandbox.md). Reads change nothing, so they add no path. What a
trajectory does *inside* the footprint is the checks' business, not this guard's.
"""

from __future__ import annotations

from typing import Any

from envscaler_core.json_equal import same_json

MAX_PATHS = 1000
"""Paths collected at most (a state that changed everywhere needs no more to be refused)."""
SHOWN_PATHS = 5
"""Collateral paths kept on a trajectory (the count is exact up to MAX_PATHS)."""


def _escape(key: Any) -> str:
    return str(key).replace("~", "~0").replace("/", "~1")


def changed_paths(before: Any, after: Any) -> list[str]:
    """The JSON Pointers where `after` differs from `before`, sorted (at most MAX_PATHS)."""
    out: list[str] = []
    work: list[tuple[Any, Any, str]] = [(before, after, "")]
    while work and len(out) < MAX_PATHS:
        old, new, path = work.pop()
        if same_json(old, new):
            continue
        if isinstance(old, dict) and isinstance(new, dict):
            out.extend(f"{path}/{_escape(k)}" for k in old if k not in new)
            out.extend(f"{path}/{_escape(k)}" for k in new if k not in old)
            work.extend((old[k], new[k], f"{path}/{_escape(k)}") for k in old if k in new)
        elif isinstance(old, list) and isinstance(new, list):
            common = min(len(old), len(new))
            out.extend(f"{path}/{i}" for i in range(common, max(len(old), len(new))))
            work.extend((old[i], new[i], f"{path}/{i}") for i in range(common))
        else:
            out.append(path)
    return sorted(out[:MAX_PATHS])


def collateral(footprint: list[str], initial: Any, final: Any) -> list[str]:
    """The trajectory's changed paths (`initial` -> `final`) that the footprint does not cover: a path is
    covered when it is a footprint path or lies under one (a field of a record the reference added)."""
    allowed = set(footprint)
    return [p for p in changed_paths(initial, final) if not _covered(p, allowed)]


def _covered(path: str, allowed: set[str]) -> bool:
    probe = path
    while True:
        if probe in allowed:
            return True
        if not probe:
            return False
        probe = probe.rsplit("/", 1)[0]
