"""State diffs: a flat list of JSON-Pointer changes between two JSON documents.

Shape (documented in docs/sandbox.md): no change is `{}`; otherwise
`{"changes": [{"op": "add"|"remove"|"replace", "path": "/a/b", "old": ..., "new": ...}]}` where `add`
has only `new`, `remove` only `old`, `replace` both. Lists are compared index by index; growth is
`add` at the new indices and shrinkage `remove` from the end, so appending to a list is one `add`.
Values of different JSON types (including bool vs int) are a `replace` of the whole value.
After `MAX_CHANGES` entries the list stops and `"truncated": true` is set.
"""

from __future__ import annotations

from typing import Any

MAX_CHANGES = 1000


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def _same_type(a: Any, b: Any) -> bool:
    return type(a) is type(b) or (isinstance(a, (int, float)) and isinstance(b, (int, float))
                                  and not isinstance(a, bool) and not isinstance(b, bool))


def _walk(old: Any, new: Any, path: str, out: list[dict[str, Any]]) -> None:
    if len(out) >= MAX_CHANGES:
        return
    if isinstance(old, dict) and isinstance(new, dict):
        for key, value in old.items():
            if key not in new:
                out.append({"op": "remove", "path": f"{path}/{_escape(key)}", "old": value})
            else:
                _walk(value, new[key], f"{path}/{_escape(key)}", out)
        for key, value in new.items():
            if key not in old:
                out.append({"op": "add", "path": f"{path}/{_escape(key)}", "new": value})
        return
    if isinstance(old, list) and isinstance(new, list):
        common = min(len(old), len(new))
        for i in range(common):
            _walk(old[i], new[i], f"{path}/{i}", out)
        for i in range(common, len(new)):
            out.append({"op": "add", "path": f"{path}/{i}", "new": new[i]})
        for i in range(len(old) - 1, common - 1, -1):
            out.append({"op": "remove", "path": f"{path}/{i}", "old": old[i]})
        return
    if not _same_type(old, new) or old != new:
        out.append({"op": "replace", "path": path, "old": old, "new": new})


def state_diff(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """`{}` when equal, else `{"changes": [...]}` (plus `"truncated": true` past MAX_CHANGES)."""
    changes: list[dict[str, Any]] = []
    _walk(old, new, "", changes)
    if not changes:
        return {}
    out: dict[str, Any] = {"changes": changes[:MAX_CHANGES]}
    if len(changes) >= MAX_CHANGES:
        out["truncated"] = True
    return out
