"""The verdict over all rounds of both passes: score, contract breaches and coverage.

Score = (pass + warning) / (counted rounds + tools never reached). A tool that no call ever got to
succeed counts as one failed round: whatever its probes showed, the code behind its guards never ran.
When such a tool changes state, acceptance is blocked outright: an env whose state changes were never
executed is unvalidated where it matters most (the scenarios' checks are about those changes).
"""

from __future__ import annotations

from collections import Counter

from envscaler_core.models.validation import ToolKindLabel, ValidationReport, ValidationRound
from envscaler_core.validation.facts import exception_summary, succeeded

UNCOUNTED = frozenset({"search"})


def reached(round_: ValidationRound) -> bool:
    return succeeded(round_.observation, round_.verdict)


def _last_refusal(rounds: list[ValidationRound]) -> str:
    for r in reversed(rounds):
        obs = r.observation
        if isinstance(obs, dict) and (obs.get("error") or obs.get("error_kind")):
            # a traceback says what happened after its frames, not on its first line
            text = exception_summary(str(obs.get("error") or obs.get("error_kind")), 1000)
            return text if len(text) <= 100 else text[:97] + "..."
    return "no call"


def coverage(rounds: list[ValidationRound], tools: list[str], labels: dict[str, ToolKindLabel]
             ) -> tuple[list[str], list[str], list[str]]:
    """(unreached tools, blocking lines, query-gap lines)."""
    unreached, blocking, gaps = [], [], []
    for tool in tools:
        mine = [r for r in rounds if r.tool == tool]
        if any(reached(r) for r in mine):
            continue
        unreached.append(tool)
        what = (f"{tool} never succeeded in {len(mine)} attempt(s) (last answer: {_last_refusal(mine)})"
                if mine else f"{tool} was never called")
        if tool in labels and labels[tool].kind == "state_change":
            blocking.append(f"coverage: state-changing code never executed: {what}; give a state where it can succeed")
        else:
            gaps.append(f"coverage: {what}")
    return unreached, blocking, gaps


def summarize(rounds: list[ValidationRound], threshold: float, mode: str, skipped: int = 0, *,
              tools: list[str] | None = None, labels: dict[str, ToolKindLabel] | None = None) -> ValidationReport:
    """Score over counted rounds and coverage gaps; a critical breach or a blocking gap vetoes acceptance.
    Without `tools`, coverage is not judged (a caller that only wants the round statistics)."""
    labels = labels or {}
    counted = [r for r in rounds if r.check not in UNCOUNTED]
    verdicts = Counter(r.verdict for r in counted)
    unreached, blocking, gaps = coverage(rounds, tools, labels) if tools is not None else ([], [], [])
    total = len(counted) + len(unreached)
    score = (verdicts["pass"] + verdicts["warning"]) / total if total else 0.0
    critical = sorted({r.reason for r in rounds if r.verdict == "fail" and _is_critical(r)})
    reasons = [reason for reason, _ in Counter(r.reason for r in counted if r.verdict != "pass").most_common()]
    per_tool: dict[str, dict[str, int]] = {}
    for r in rounds:
        row = per_tool.setdefault(r.tool, {"total": 0, "pass": 0, "warning": 0, "fail": 0, "refused": 0})
        if r.check in UNCOUNTED:
            row["refused"] += 1
            continue
        row["total"] += 1
        row[r.verdict] += 1
    return ValidationReport(
        accepted=len(counted) > 0 and score >= threshold and not critical and not blocking,
        score=round(score, 4), threshold=threshold, mode=mode, rounds=len(counted), passes=verdicts["pass"],
        warnings=verdicts["warning"], fails=verdicts["fail"], skipped=skipped, critical=critical,
        reasons=(blocking + gaps + reasons)[:10], per_tool=per_tool, tool_kinds=dict(labels), unreached=unreached,
        blocking=blocking,
    )


def _is_critical(r: ValidationRound) -> bool:
    """Programmatic fails are contract facts by construction; LLM-pass fails only when prefixed so."""
    return r.mode == "programmatic" or r.reason.startswith("contract:")
