"""A state as "the test state plus these changes": how validation prompts show a state that moves.

Every round of a validation chain starts from the same test state, and a round changes little of it.
Sending the whole current state each round makes the state the largest varying part of every prompt;
sending the test state once (in the prompt's cached context) and then only the changes since it keeps
the varying part small and the prefix stable, so providers' prefix caches serve most of each prompt.

Changes are a list of JSON-Pointer operations (RFC 6901 paths, RFC 6902 op names) with the new value:
`{"op": "add"|"replace", "path": "/a/b", "value": ...}` or `{"op": "remove", "path": "/a/b"}`. Dicts are
compared key by key, lists index by index (growth is `add` at the new indices, shrinkage `remove` from
the end, applied from the last index down), anything else is replaced whole. `apply_changes(initial,
state_changes(initial, current)) == current` for every JSON document (a test checks it).
"""

from __future__ import annotations

import copy
from typing import Any

from envscaler_core.json_equal import same_json


def pointer_token(key: str) -> str:
    """`key` as one JSON Pointer segment (RFC 6901: `~` -> `~0`, `/` -> `~1`)."""
    return key.replace("~", "~0").replace("/", "~1")


def pointer_key(token: str) -> str:
    """The key one JSON Pointer segment names (`pointer_token` undone)."""
    return token.replace("~1", "/").replace("~0", "~")


def state_changes(initial: Any, current: Any, path: str = "") -> list[dict[str, Any]]:
    """The operations that turn `initial` into `current` (empty when they are equal)."""
    out: list[dict[str, Any]] = []
    _walk(initial, current, path, out)
    return out


def _walk(old: Any, new: Any, path: str, out: list[dict[str, Any]]) -> None:
    if same_json(old, new):  # True/1, 2/2.0 and -0.0/0.0 are changes (Python's == would hide them)
        return
    if isinstance(old, dict) and isinstance(new, dict):
        for key, value in old.items():
            sub = f"{path}/{pointer_token(str(key))}"
            if key not in new:
                out.append({"op": "remove", "path": sub})
            else:
                _walk(value, new[key], sub, out)
        out.extend({"op": "add", "path": f"{path}/{pointer_token(str(k))}", "value": v} for k, v in new.items() if k not in old)
        return
    if isinstance(old, list) and isinstance(new, list):
        common = min(len(old), len(new))
        for i in range(common):
            _walk(old[i], new[i], f"{path}/{i}", out)
        out.extend({"op": "add", "path": f"{path}/{i}", "value": new[i]} for i in range(common, len(new)))
        out.extend({"op": "remove", "path": f"{path}/{i}"} for i in range(len(old) - 1, common - 1, -1))
        return
    out.append({"op": "replace", "path": path, "value": new})


def apply_changes(initial: Any, changes: list[dict[str, Any]]) -> Any:
    """`initial` with `changes` applied (a copy; `initial` is not modified). ValueError names a change
    whose path does not resolve."""
    doc = copy.deepcopy(initial)
    for change in changes:
        op, path = change.get("op"), change.get("path", "")
        if path == "":
            if op == "remove":
                raise ValueError("change removes the whole document")
            doc = copy.deepcopy(change.get("value"))
            continue
        *parents, last = [pointer_key(t) for t in path.split("/")[1:]]
        target = doc
        try:
            for token in parents:
                target = target[int(token)] if isinstance(target, list) else target[token]
            if isinstance(target, list):
                index = int(last)
                if op == "remove":
                    del target[index]
                elif op == "add" and index == len(target):
                    target.append(copy.deepcopy(change.get("value")))
                else:
                    target[index] = copy.deepcopy(change.get("value"))
            elif op == "remove":
                del target[last]
            else:
                target[last] = copy.deepcopy(change.get("value"))
        except (KeyError, IndexError, TypeError, ValueError) as exc:
            raise ValueError(f"change {op} {path!r} does not apply: {exc!r}") from None
    return doc
