"""The one rule for a value that the factory stores or sends as JSON, checked in one place.

Python's `json` reads things no store, wire or tokenizer carries: a lone surrogate escape (legal JSON
text, not valid Unicode), NaN and Infinity, and containers nested deep enough to hit a recursion limit
in whatever serialises them next. Model replies (tool-call arguments) and imported files (EnvScaler
scenarios, solutions) both meet this rule; each caller adds only what is its own (a reply problem, a
file position).
"""

from __future__ import annotations

import json
from typing import Any

MAX_DEPTH = 64
"""Far beyond any tool's parameters or any state a scenario holds; deeper values are refused, so that
nothing downstream (schema checks, serialisation, the sandbox's wire) meets a recursion limit."""


def nesting_depth(value: Any) -> int:
    """How deeply lists and dicts nest in `value` (a scalar is 0), without recursing."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        node, depth = stack.pop()
        children = node.values() if isinstance(node, dict) else node if isinstance(node, list) else None
        if children is None:
            continue
        deepest = max(deepest, depth)
        stack.extend((child, depth + 1) for child in children)
    return deepest


def plain_json_problem(value: Any, *, allow_nan: bool = False) -> str | None:
    """Why `value` cannot be carried as JSON, as a phrase that follows its name ("holds ...", "nested
    ..."); None when it can. `allow_nan` keeps NaN/Infinity for readers that take Python's JSON."""
    if nesting_depth(value) > MAX_DEPTH:
        return f"nested more than {MAX_DEPTH} levels deep"
    try:
        json.dumps(value, allow_nan=allow_nan, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return "holds text that is not valid Unicode (a lone surrogate)"
    except ValueError as exc:  # NaN/Infinity, or an int past Python's digit limit for writing it
        return "holds NaN or Infinity" if "float" in str(exc) else f"holds a value that is not JSON ({str(exc)[:120]})"
    except TypeError as exc:
        return f"holds a value that is not JSON ({str(exc)[:120]})"
    return None
