"""Spec: contract facts are decided from what the sandbox observed, not from any judge's opinion."""

from __future__ import annotations

import json

import pytest

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


JSON_ONLY_CHANGES = [(1, True), (0, False), (2, 2.0), (0.0, -0.0), ([1, 1], [1, True]), ({"n": [0.0]}, {"n": [-0.0]})]


@pytest.mark.parametrize(("old", "new"), JSON_ONLY_CHANGES, ids=lambda v: json.dumps(v))
def test_a_change_python_calls_equal_but_json_shows_is_a_change(old: object, new: object) -> None:
    assert old == new  # what Python's == says, and why it may not decide
    assert changed_paths({"x": old}, {"x": new}) == (["/x/n"] if isinstance(old, dict) else ["/x"])


@pytest.mark.parametrize(("old", "new"), JSON_ONLY_CHANGES, ids=lambda v: json.dumps(v))
def test_a_query_or_a_failure_making_such_a_change_is_critical(old: object, new: object) -> None:
    before, after = {"x": old}, {"x": new}
    assert call_facts(outcome({"success": True, "data": 1}, after), before, "query").critical == [
        "query tool t changed state"]
    assert call_facts(outcome({"success": False, "error": "no"}, after), before, "state_change").critical == [
        "t reported failure but changed state"]


def test_the_same_json_in_another_key_order_is_no_change() -> None:
    assert changed_paths({"a": {"x": 1, "y": [0.5, False]}}, {"a": {"y": [0.5, False], "x": 1}}) == []
