"""Setup calls a probe makes before its own call, and the arguments it takes from what they returned
(`session_token` from `open_session`'s result): how the programmatic pass reaches a tool that needs
another tool's state change or token first."""

from __future__ import annotations

from typing import Any

from envscaler_core.runtime import Episode
from envscaler_core.validation.probes import Probe
from envscaler_core.validation.state_values import values_under


def set_up(ep: Episode, probe: Probe) -> list[dict[str, Any]] | None:
    """Make the probe's setup calls; their results, or None unless each succeeds again as it did when
    it was probed."""
    results = []
    for tool, args in probe.setup:
        out = ep.call(tool, args)
        if not (out.ok and isinstance(out.result, dict) and out.result.get("success") is True):
            return None
        results.append(out.result)
    return results


def result_keys(result: Any, depth: int = 3) -> set[str]:
    """Keys of a result that hold a string or an integer (what could be an id or a token), nested."""
    if depth == 0 or not isinstance(result, dict):
        return set()
    keys = set()
    for key, value in result.items():
        if isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool)):
            keys.add(key)
        keys |= result_keys(value, depth - 1)
    return keys - {"success", "message", "error"}


def same_name(param: str, key: str) -> bool:
    """`session_token` ~ `session_token`, `token` ~ `session_token`, `order_id` ~ `id`: one name ends
    the other, and the shorter is a real word of it (4+ characters, or a whole `_`-part)."""
    if param == key:
        return True
    short, long = sorted((param, key), key=len)
    return long.endswith("_" + short) and (len(short) >= 4 or short == "id")


def fed_args(probe: Probe, results: list[dict[str, Any]]) -> dict[str, Any]:
    """The probe's arguments with each fed parameter set from the latest setup result holding its key."""
    if not probe.fed:
        return probe.args
    args = dict(probe.args)
    for param, key in probe.fed.items():
        value = next((found[0] for found in (values_under(r, key, frozenset()) for r in reversed(results)) if found),
                     None)
        if value is not None:
            args[param] = value
    return args
