"""When two states are the same: the one comparison every judgement of a state change uses.

Two values are the same when they serialise to the same JSON (up to the order of object keys): Python's
`==` is not that, since it calls `1 == True == 1.0` and `0.0 == -0.0` equal, while a check reading the
state sees `true`, `1`, `1.0` and `-0.0` as different values (`copies is False`, `isinstance(n, int)`).
The contract facts (`validation/facts.py`), the sandbox's `state_diff` (`sandbox/diff.py`), the
judge's view of a call's changes (`models/changes.py`) and the replay of a state change all ask here,
so a change one of them sees is a change for all of them.

States are JSON documents (dicts, lists, str, int, float, bool, None); anything else compares with `==`.
"""

from __future__ import annotations

import marshal
import math
from typing import Any


def same_json(a: Any, b: Any) -> bool:
    """True iff `a` and `b` are the same JSON value: bool, int and float are different types (`1`,
    `true`, `1.0`), `-0.0` is not `0.0`, recursively; object key order does not matter.

    Fast at C speed for the common cases: `==` decides every difference Python can see, and when it
    says equal, equal `marshal` bytes (which keep bool, int and float apart, and the sign of zero)
    prove the sameness. Only when the bytes differ (dict key order, shared or interned strings) is the
    value walked, one level at a time with the same shortcut below."""
    if a is b:
        return True
    if type(a) is not type(b):
        return False
    if a != b:  # nothing JSON has (no NaN) is the same value and unequal under ==
        return False
    if isinstance(a, float):
        return math.copysign(1.0, a) == math.copysign(1.0, b)
    if not isinstance(a, (dict, list)):
        return True
    try:
        if marshal.dumps(a, 2) == marshal.dumps(b, 2):
            return True
    except (ValueError, RecursionError):  # not a JSON document after all: walk it
        pass
    if isinstance(a, dict):
        return all(same_json(value, b[key]) for key, value in a.items())  # == said: the same keys
    return all(same_json(x, y) for x, y in zip(a, b))  # == said: the same length
