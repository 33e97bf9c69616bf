"""When two states count as "the same" for the kept-back-change checks (`validation/sequence.py`).

A state change run twice, once after queries and refusals and once without them, must leave the same
state. Two things may still differ in a sound class, and only those two:

- the values a tool's own replay showed as nondeterministic (a new uuid, a random loan id): each tool's
  replay records the *paths* at which its two runs differed (`volatile_paths`), list indices read as
  `*` and a dict whose new keys differed as `?`, and only those paths, of the tools that ran, are
  masked (`same_state`);
- a clock a moment later: two strings that are equal once their date/time substrings are masked, whose
  date/time substrings are each no further apart than the time the pass has run (plus the stamp's
  resolution). "OVERDUE since 00:00" against "due 2026-12-10" is a difference.
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from typing import Any

from envscaler_core.json_equal import same_json

Path = tuple[str, ...]
ANY_INDEX, ANY_KEY, KEYS = "*", "?", "<keys>"  # a list's items, a volatile dict's values, its key names
_MASKED = "<nondeterministic>"


def volatile_paths(a: Any, b: Any, path: Path = ()) -> set[Path]:
    """The paths at which two runs of the same call from the same state differ."""
    if isinstance(a, dict) and isinstance(b, dict):
        out: set[Path] = set()
        for key in a.keys() & b.keys():
            out |= volatile_paths(a[key], b[key], (*path, str(key)))
        only_a, only_b = [k for k in a if k not in b], [k for k in b if k not in a]
        if only_a or only_b:  # a fresh key per run: its name, and what differs under it, pair by pair
            out.add((*path, KEYS))
            for x, y in zip(only_a, only_b):
                out |= volatile_paths(a[x], b[y], (*path, ANY_KEY))
        return out
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return {p for x, y in zip(a, b) for p in volatile_paths(x, y, (*path, ANY_INDEX))}
    return set() if same_json(a, b) else {path}


def mask(doc: Any, paths: set[Path], path: Path = ()) -> Any:
    if path in paths:
        return _MASKED
    if isinstance(doc, dict):
        if (*path, KEYS) in paths:  # compared as the multiset of its values
            return sorted((mask(v, paths, (*path, ANY_KEY)) for v in doc.values()),
                          key=lambda v: json.dumps(v, sort_keys=True, default=str))
        return {k: mask(v, paths, (*path, str(k))) for k, v in doc.items()}
    if isinstance(doc, list):
        return [mask(v, paths, (*path, ANY_INDEX)) for v in doc]
    return doc


def same_state(a: Any, b: Any, volatile: set[Path], slack_s: float) -> bool:
    """`a` and `b` are the same JSON but at the `volatile` paths and for clock stamps `slack_s` apart."""
    if same_json(a, b):
        return True
    return _close(mask(a, volatile), mask(b, volatile), slack_s)


def _close(a: Any, b: Any, slack_s: float) -> bool:
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_close(a[k], b[k], slack_s) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_close(x, y, slack_s) for x, y in zip(a, b))
    if isinstance(a, str) and isinstance(b, str) and a != b:
        return clock_moment_later(a, b, slack_s)
    return same_json(a, b)


_CLOCK = re.compile(r"(?P<date>\d{4}-\d\d-\d\d)(?:[T ](?P<dt>\d\d:\d\d(?::\d\d(?:\.\d+)?)?))?"
                    r"|(?<!\d)(?P<time>\d\d:\d\d(?::\d\d(?:\.\d+)?)?)(?!\d)")


def clock_moment_later(a: str, b: str, slack_s: float) -> bool:
    """Equal once their date/time substrings are masked, and each pair of those no more than `slack_s`
    (plus the stamp's own resolution: a minute without seconds) apart."""
    ma, mb = list(_CLOCK.finditer(a)), list(_CLOCK.finditer(b))
    if not ma or len(ma) != len(mb) or _CLOCK.sub("\0", a) != _CLOCK.sub("\0", b):
        return False
    for x, y in zip(ma, mb):
        if _form(x[0]) != _form(y[0]):
            return False
        apart = _apart(x, y)
        if apart is None or apart > slack_s + _resolution(x) + _resolution(y):
            return False
    return True


def _form(stamp: str) -> str:
    return re.sub(r"\d", "0", re.sub(r"\.\d+", ".", stamp))


def _apart(x: re.Match[str], y: re.Match[str]) -> float | None:
    """Seconds between two stamps of the same form (None: different forms or no real date/time)."""
    if (x["date"] is None) != (y["date"] is None) or (x["dt"] is None) != (y["dt"] is None):
        return None
    try:
        if x["date"] is not None:
            tx, ty = (datetime.fromisoformat(m["date"] + ("T" + m["dt"] if m["dt"] else "")) for m in (x, y))
            return abs((tx - ty).total_seconds())
        sx, sy = (_seconds_of_day(m["time"]) for m in (x, y))
    except ValueError:
        return None
    d = abs(sx - sy)
    return min(d, 86400 - d)  # a moment later may be past midnight


def _seconds_of_day(text: str) -> float:
    parts = text.split(":")
    h, m, s = int(parts[0]), int(parts[1]), float(parts[2]) if len(parts) > 2 else 0.0
    if h > 23 or m > 59 or s >= 61:
        raise ValueError(text)
    return h * 3600 + m * 60 + s


def _resolution(m: re.Match[str]) -> float:
    clock = m["dt"] or m["time"]
    if clock is None:
        return 0.0  # a date alone: the same day or a difference
    return 60.0 if clock.count(":") == 1 else 1.0
