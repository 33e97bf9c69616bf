"""State diffs: a flat list of JSON-Pointer changes between two JSON documents.

Shape (documented in docs/sandbox.md): no change is `{}`; otherwise
`{"changes": [{"op": "add"|"remove"|"replace", "path": "/a/b", "old": ..., "new": ...}]}` where `add`
has only `new`, `remove` only `old`, `replace` both. Lists are compared index by index; growth is
`add` at the new indices and shrinkage `remove` from the end, so appending to a list is one `add`.
Values that are not the same JSON (`envscaler_core.json_equal.same_json`, which the validator's facts
use too) are a `replace` of the whole value: another type (bool vs int, int vs float) or another sign
of zero (0.0 vs -0.0) included.
After `MAX_CHANGES` entries the list stops and `"truncated": true` is set.
"""

from __future__ import annotations

from typing import Any

from envscaler_core.json_equal import same_json

MAX_CHANGES = 1000
CHUNK = 256


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


class _Full(Exception):
    """The change list reached MAX_CHANGES: stop walking at once."""


def _emit(out: list[dict[str, Any]], change: dict[str, Any]) -> None:
    if len(out) >= MAX_CHANGES:
        raise _Full
    out.append(change)


def _walk(old: Any, new: Any, path: str, out: list[dict[str, Any]]) -> None:
    """Appends the changes from `old` to `new`; raises _Full as soon as one more would pass the cap, so
    no loop runs past it (a 1 MiB state of all-new keys costs MAX_CHANGES steps, not a million).
    Equal subtrees are skipped with one C-level comparison. Depth is bounded by the wire's nesting cap."""
    if isinstance(old, dict) and isinstance(new, dict):
        for key, value in old.items():
            if key not in new:
                _emit(out, {"op": "remove", "path": f"{path}/{_escape(key)}", "old": value})
            elif not same_json(value, new[key]):
                _walk(value, new[key], f"{path}/{_escape(key)}", out)
        for key, value in new.items():
            if key not in old:
                _emit(out, {"op": "add", "path": f"{path}/{_escape(key)}", "new": value})
        return
    if isinstance(old, list) and isinstance(new, list):
        common = min(len(old), len(new))
        for start in range(0, common, CHUNK):  # equal runs of a long list are skipped at C speed
            stop = min(start + CHUNK, common)
            if stop - start > 1 and same_json(old[start:stop], new[start:stop]):
                continue
            for i in range(start, stop):
                if not same_json(old[i], new[i]):
                    _walk(old[i], new[i], f"{path}/{i}", out)
        for i in range(common, len(new)):
            _emit(out, {"op": "add", "path": f"{path}/{i}", "new": new[i]})
        for i in range(len(old) - 1, common - 1, -1):
            _emit(out, {"op": "remove", "path": f"{path}/{i}", "old": old[i]})
        return
    if not same_json(old, new):
        _emit(out, {"op": "replace", "path": path, "old": old, "new": new})


def state_diff(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """`{}` when equal, else `{"changes": [...]}` (plus `"truncated": true` once MAX_CHANGES is reached)."""
    changes: list[dict[str, Any]] = []
    truncated = False
    try:
        _walk(old, new, "", changes)
    except _Full:
        truncated = True
    if not changes:
        return {}
    out: dict[str, Any] = {"changes": changes}
    if truncated or len(changes) >= MAX_CHANGES:
        out["truncated"] = True
    return out
