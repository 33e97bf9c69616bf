"""How long a server asks us to wait before the next attempt: its headers (`Retry-After`, `retry-after-ms`,
OpenAI's `x-ratelimit-reset-*`) and its error body (Gemini's `RetryInfo`, "Please retry in 19.6s."). Apart
from `retry` (which decides whether to retry at all) because it is pure parsing of what servers say."""

from __future__ import annotations

import json
import re
import time
from email.utils import parsedate_to_datetime
from typing import Any, Mapping


def parse_retry_after(headers: Mapping[str, str] | None, now: float | None = None) -> float | None:
    """Seconds the server asked us to wait: `retry-after-ms`, else `Retry-After` as seconds or an
    HTTP-date. None when absent or unparseable (then plain backoff applies)."""
    if not headers:
        return None
    ms = headers.get("retry-after-ms")
    if ms is not None:
        try:
            return max(float(ms) / 1000.0, 0.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    value = value.strip()
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    return max(when.timestamp() - (time.time() if now is None else now), 0.0)


_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|us|µs|ns|h|m|s)")
_UNIT_S = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9}


def parse_duration(value: str) -> float | None:
    """OpenAI's rate-limit durations ("2s", "1m30s", "150ms", "6m0s", "1h2m3.5s"; a bare number is
    seconds) in seconds; None when it is not one."""
    text = value.strip()
    try:
        seconds = float(text)
    except ValueError:
        pieces = _DURATION.findall(text)
        if not pieces or "".join(n + u for n, u in pieces) != text:
            return None
        seconds = sum(float(n) * _UNIT_S[u] for n, u in pieces)
    return seconds if seconds >= 0 and seconds == seconds and seconds != float("inf") else None


def rate_limit_reset(headers: Mapping[str, str] | None) -> float | None:
    """How long until the exhausted rate limit resets, from `x-ratelimit-reset-requests` /
    `x-ratelimit-reset-tokens` (OpenAI, Azure, Groq and others send them with a 429 that has no
    Retry-After): the one whose `x-ratelimit-remaining-*` is 0, else the longer of the two. None when
    neither is given."""
    if not headers:
        return None
    resets = {}
    for kind in ("requests", "tokens"):
        value = headers.get(f"x-ratelimit-reset-{kind}")
        seconds = parse_duration(value) if value is not None else None
        if seconds is not None:
            resets[kind] = seconds
    if not resets:
        return None
    exhausted = [s for kind, s in resets.items() if str(headers.get(f"x-ratelimit-remaining-{kind}", "")).strip() == "0"]
    return max(exhausted or resets.values())


_DELAY_KEYS = ("retryDelay", "retry_delay", "retry_after", "retryAfter", "retry_after_s", "retry_after_seconds",
               "retry_after_ms")
_DELAY_WORDS = re.compile(r"(?:retry|try again)\s+(?:in|after)\s+(?:about\s+)?((?:\d+(?:\.\d+)?\s*(?:ms|h|m|s|"
                          r"milliseconds?|seconds?|secs?|minutes?|mins?|hours?)(?![a-zA-Z])\s*)+)", re.IGNORECASE)
_WORD_UNIT = {"millisecond": "ms", "milliseconds": "ms", "second": "s", "seconds": "s", "sec": "s", "secs": "s",
              "minute": "m", "minutes": "m", "min": "m", "mins": "m", "hour": "h", "hours": "h"}


def _stated_delay(value: Any, key: str) -> float | None:
    """One body field's delay: a number (seconds; milliseconds under a `_ms` key) or a duration string
    (Google's protobuf Duration "19s" / "0.5s", OpenAI's "1m30s")."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        seconds = value / 1000.0 if key.endswith("_ms") else float(value)
        return seconds if 0 <= seconds < float("inf") else None
    return parse_duration(value) if isinstance(value, str) else None


def _delay_fields(body: Any, depth: int = 0) -> float | None:
    if depth > 6:
        return None
    if isinstance(body, list):
        found = [d for item in body if (d := _delay_fields(item, depth + 1)) is not None]
        return max(found) if found else None
    if not isinstance(body, dict):
        return None
    for key in _DELAY_KEYS:
        if key in body and (seconds := _stated_delay(body[key], key)) is not None:
            return seconds
    found = [d for value in body.values() if isinstance(value, dict | list)
             and (d := _delay_fields(value, depth + 1)) is not None]
    return max(found) if found else None


def body_retry_delay(body: Any) -> float | None:
    """Seconds an error body says to wait, for servers that say it there and not in a header: a field
    (Gemini's `RetryInfo` detail `{"retryDelay": "19s"}`, a `retry_after` beside the message), else the
    words ("Please retry in 19.6s.", "Please try again in 1m30s.", "Please retry after 1 second."). None when
    it says nothing. Before, Gemini's free tier answered 429 for 20 s and every retry came within 1-2 s:
    the work failed after 7 attempts in 7-11 s."""
    seconds = _delay_fields(body)
    if seconds is not None:
        return seconds
    text = body if isinstance(body, str) else json.dumps(body, default=str, ensure_ascii=False)
    found = _DELAY_WORDS.search(text)
    if not found:
        return None
    pieces = re.findall(r"(\d+(?:\.\d+)?)\s*([a-zA-Z]+)", found.group(1))
    return sum(float(n) * _UNIT_S[_WORD_UNIT.get(u.lower(), u.lower())] for n, u in pieces)
