"""What `envscaler validate` prints: the verdict as JSON (default) or as text (`--text`).

Both show what a user needs to trust or fix the verdict: the state the class was tested with, the
label each tool was judged under and where it came from, and any tool whose code no call reached."""

from __future__ import annotations

from typing import Any


def _as_held(state: dict[str, Any]) -> dict[str, Any]:
    """The state as the class holds it: EnvScaler's type markers restored (a seat map of 4 tuple keys is
    a dict of 4, not the marker's `__type__` and `items`); a state without markers as it is."""
    from envscaler_core.interop.jail_side import restore_markers
    from envscaler_core.interop.sandboxed import has_markers

    if not has_markers(state):
        return state
    try:
        restored = restore_markers(state)
    except (TypeError, ValueError, ArithmeticError):
        return state
    return restored if isinstance(restored, dict) else state


def _summary(value: Any) -> str:
    if isinstance(value, set | frozenset):
        return f"set of {len(value)}"
    if isinstance(value, tuple):
        return f"tuple of {len(value)}"
    if isinstance(value, dict):
        keys = ", ".join(str(k) for k in list(value)[:4]) + (", ..." if len(value) > 4 else "")
        return f"dict of {len(value)} ({keys})" if value else "empty dict"
    if isinstance(value, list):
        return f"list of {len(value)}"
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def verdict_json(outcome: Any) -> dict[str, Any]:
    report = outcome.report
    return {
        "accepted": report.accepted, "score": report.score, "threshold": report.threshold, "mode": report.mode,
        "rounds": report.rounds, "passes": report.passes, "warnings": report.warnings, "fails": report.fails,
        "skipped": report.skipped, "critical": report.critical, "blocking": report.blocking,
        "unreached": report.unreached, "reasons": report.reasons,
        "tool_kinds": {name: {"kind": label.kind, "source": label.source, "evidence": label.evidence}
                       for name, label in report.tool_kinds.items()},
        "per_tool": report.per_tool, "test_state": outcome.test_state, "failure": outcome.failure,
        "llm_pass_skipped": report.llm_pass_skipped,
    }


def verdict_text(outcome: Any) -> str:
    report = outcome.report
    verdict = "ACCEPTED" if report.accepted else "REJECTED"
    lines = [f"{verdict}: score {report.score:.2f} (threshold {report.threshold:.2f}, mode {report.mode}, "
             f"{report.rounds} rounds: {report.passes} pass / {report.warnings} warning / {report.fails} fail, "
             f"{report.skipped} skipped)"]
    if outcome.test_state is not None:
        state = "; ".join(f"{k}: {_summary(v)}" for k, v in _as_held(outcome.test_state).items()) or "empty"
        lines.append(f"  state:    {state}")
    for name, label in report.tool_kinds.items():
        row = report.per_tool.get(name, {})
        reach = "never succeeded" if name in report.unreached else "reached"
        lines.append(f"  tool:     {name}: {label.kind} (from {label.source}); {row.get('total', 0)} calls, "
                     f"{row.get('fail', 0)} fail, {reach}")
    lines += [f"  critical: {_one_line(line)}" for line in report.critical]
    lines += [f"  blocking: {_one_line(line)}" for line in report.blocking]
    shown = set(report.critical) | set(report.blocking)
    lines += [f"  reason:   {_one_line(line)}" for line in report.reasons[:5] if line not in shown]
    if outcome.failure and not any(line in outcome.failure for line in shown):
        lines.append(f"  failure:  {_one_line(outcome.failure)}")
    return "\n".join(lines)


def _one_line(text: str) -> str:
    """A traceback is told by its last line ("KeyError: 'need'"); the JSON verdict keeps it whole."""
    if "Traceback (most recent call last)" not in text:
        return text
    from envscaler_core.validation.facts import exception_summary  # the validation package: ~0.5 s, at use

    return exception_summary(text, len(text))
