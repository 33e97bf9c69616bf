"""Spec: contract facts are decided from what the sandbox observed, not from any judge's opinion."""

from __future__ import annotations

from envscaler_core.runtime import CallOutcome
from envscaler_core.validation import call_facts, changed_paths

BEFORE = {"items": {"a": {"qty": 1}}, "log": []}


def outcome(result: object = None, state: dict | None = None, ok: bool = True, kind: str | None = None) -> CallOutcome:
    return CallOutcome(tool="t", ok=ok, result=result, error=None if ok else "Traceback\nKeyError: 'x'",
                       error_kind=kind, state=BEFORE if state is None else state)


def test_changed_paths_walk_dicts_and_compare_lists_whole() -> None:
    after = {"items": {"a": {"qty": 2}, "b": {}}, "log": ["x"]}
    assert changed_paths(BEFORE, after) == ["/items/a/qty", "/items/b", "/log"]


def test_an_escaped_exception_is_critical() -> None:
    facts = call_facts(outcome(ok=False, kind="exception"), BEFORE, "state_change")
    assert facts.verdict == "fail" and "KeyError" in facts.reason


def test_a_schema_rejection_says_nothing_about_the_env() -> None:
    facts = call_facts(outcome(ok=False, kind="schema"), BEFORE, "query")
    assert facts.verdict == "pass" and not facts.critical


def test_non_dict_return_is_critical() -> None:
    assert call_facts(outcome(result="done"), BEFORE, "query").critical == ["t returned str, not a dict"]


def test_missing_success_flag_is_critical() -> None:
    assert "without a boolean 'success'" in call_facts(outcome(result={"data": 1}), BEFORE, "query").reason


def test_query_that_changes_state_is_critical() -> None:
    facts = call_facts(outcome({"success": True, "data": 1}, {"items": {}, "log": []}), BEFORE, "query")
    assert facts.critical == ["query tool t changed state"]


def test_failed_call_that_changes_state_is_critical() -> None:
    facts = call_facts(outcome({"success": False, "error": "no"}, {"items": {}, "log": []}), BEFORE, "state_change")
    assert facts.critical == ["t reported failure but changed state"]


def test_negative_case_accepted_with_a_change_is_a_warning() -> None:
    facts = call_facts(outcome({"success": True, "message": "ok"}, {"items": {}, "log": []}), BEFORE,
                       "state_change", "negative")
    assert facts.verdict == "warning" and "missing validation" in facts.reason


def test_well_formed_failure_without_change_passes() -> None:
    facts = call_facts(outcome({"success": False, "error": "unknown id"}), BEFORE, "state_change", "negative")
    assert facts.verdict == "pass" and facts.success is False and not facts.changed
