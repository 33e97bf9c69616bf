"""Spec: the acceptance rule is score >= threshold with no critical breach, and zero rounds never pass."""

from __future__ import annotations

from envscaler_core.models.validation import ValidationRound
from envscaler_core.validation import summarize


def rnd(i: int, verdict: str, mode: str = "llm", reason: str = "ok", tool: str = "t") -> ValidationRound:
    return ValidationRound(candidate_fp="c", mode=mode, index=i, tool=tool, case_type="positive",
                           verdict=verdict, reason=reason)


def test_score_counts_warnings_as_not_failed() -> None:
    rounds = [rnd(i, "pass") for i in range(17)] + [
        rnd(17, "warning", reason="no bounds check"), rnd(18, "warning", reason="no bounds check"),
        rnd(19, "fail", reason="wrong total")]
    report = summarize(rounds, 0.85, "llm")
    assert report.score == 0.95 and report.accepted
    assert report.reasons == ["no bounds check", "wrong total"]  # most common first


def test_below_threshold_is_rejected() -> None:
    rounds = [rnd(i, "pass") for i in range(8)] + [rnd(8, "fail", reason="x"), rnd(9, "fail", reason="x")]
    assert not summarize(rounds, 0.85, "llm").accepted


def test_one_critical_breach_vetoes_a_high_score() -> None:
    rounds = [rnd(i, "pass") for i in range(29)] + [rnd(29, "fail", reason="contract: query tool t changed state")]
    report = summarize(rounds, 0.85, "llm")
    assert report.score > 0.95 and not report.accepted
    assert report.critical == ["contract: query tool t changed state"]


def test_judge_fail_alone_is_not_critical() -> None:
    rounds = [rnd(i, "pass") for i in range(29)] + [rnd(29, "fail", reason="returns wrong total")]
    assert summarize(rounds, 0.85, "llm").accepted


def test_programmatic_fail_is_critical() -> None:
    rounds = [rnd(i, "pass", "programmatic") for i in range(29)] + [rnd(29, "fail", "programmatic", "exception in t: KeyError")]
    assert not summarize(rounds, 0.85, "programmatic").accepted


def test_zero_counted_rounds_is_rejected_not_a_crash() -> None:
    report = summarize([], 0.85, "llm", skipped=30)
    assert not report.accepted and report.score == 0.0 and report.skipped == 30


def test_per_tool_rows_count_verdicts() -> None:
    report = summarize([rnd(0, "pass", tool="a"), rnd(1, "fail", tool="a", reason="r"), rnd(2, "pass", tool="b")], 0.5, "llm")
    assert report.per_tool["a"] == {"total": 2, "pass": 1, "warning": 0, "fail": 1}
