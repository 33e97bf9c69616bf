"""Spec: the acceptance rule is score >= threshold with no critical breach, and zero rounds never pass."""

from __future__ import annotations

from envscaler_core.models.validation import ToolKindLabel, ValidationRound
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
    assert report.per_tool["a"] == {"total": 2, "pass": 1, "warning": 0, "fail": 1, "refused": 0}


def ok(i: int, tool: str, mode: str = "programmatic", check: str = "contract", success: bool = True) -> ValidationRound:
    verdict = "pass" if success else "warning"
    return ValidationRound(candidate_fp="c", mode=mode, index=i, tool=tool, case_type="positive", check=check,
                           observation={"success": success, **({} if success else {"error": "no such item"})},
                           verdict=verdict, reason="ok")


def test_a_refused_positive_probe_is_shown_but_never_counted_as_a_pass() -> None:
    rounds = [ok(0, "get"), ok(1, "complete", check="search", success=False), ok(2, "complete")]
    report = summarize(rounds, 0.85, "programmatic", tools=["get", "complete"], labels={})
    assert report.rounds == 2 and report.per_tool["complete"] == {"total": 1, "pass": 1, "warning": 0, "fail": 0,
                                                                   "refused": 1}


def test_a_state_changing_tool_that_never_succeeded_blocks_acceptance_whatever_the_score() -> None:
    labels = {"get": ToolKindLabel(kind="query", source="name"), "complete": ToolKindLabel(kind="state_change", source="name")}
    rounds = [ok(i, "get") for i in range(20)] + [ok(20, "complete", check="search", success=False)]
    report = summarize(rounds, 0.85, "programmatic", tools=["get", "complete"], labels=labels)
    assert not report.accepted and report.unreached == ["complete"]
    assert report.blocking and "complete never succeeded in 1 attempt(s) (last answer: no such item)" in report.blocking[0]


def test_a_tool_that_only_crashed_is_explained_by_its_exception_not_the_traceback_header() -> None:
    labels = {"complete": ToolKindLabel(kind="state_change", source="name")}
    crash = ValidationRound(candidate_fp="c", mode="programmatic", index=0, tool="complete", case_type="positive",
                            check="contract", verdict="fail", reason="exception",
                            observation={"error": 'Traceback (most recent call last):\n  File "<env>", line 4, in '
                                                  "complete\nAttributeError: 'list' object has no attribute 'get'",
                                         "error_kind": "exception"})
    report = summarize([crash], 0.85, "programmatic", tools=["complete"], labels=labels)
    assert "(last answer: AttributeError: 'list' object has no attribute 'get')" in report.blocking[0]


def test_a_query_that_never_succeeded_lowers_the_score_without_blocking() -> None:
    labels = {"get": ToolKindLabel(kind="query", source="name"), "find": ToolKindLabel(kind="query", source="name")}
    rounds = [ok(i, "get") for i in range(9)]
    report = summarize(rounds, 0.85, "programmatic", tools=["get", "find"], labels=labels)
    assert report.score == 0.9 and report.accepted and report.unreached == ["find"] and not report.blocking
    assert "coverage: find was never called" in report.reasons
