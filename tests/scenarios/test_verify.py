"""Spec: verify_scenario accepts only checks that are real bools, False initially, True after the plan."""

from __future__ import annotations

from envscaler_core.models.scenario import CheckSpec, ToolCall
from envscaler_core.scenarios import score_checks, verify_scenario
from tests.scenarios.helpers import LENT_B1, LOAN_ANA, NEVER, STATE, VACUOUS, forging_library_env, library_env, scenario

TIMEOUT = 2.0


def test_good_hand_written_scenario_is_verified(runtime):
    report = verify_scenario(scenario(), library_env(), runtime, TIMEOUT)
    assert report.ok, report.reason
    assert [d.on_initial for d in report.checks] == [False, False]
    assert [d.on_solved for d in report.checks] == [True, True]
    assert report.final_state["books"]["b1"]["status"] == "lent"


def test_check_already_true_on_initial_state_is_rejected_as_vacuous(runtime):
    report = verify_scenario(scenario([LENT_B1, VACUOUS]), library_env(), runtime, TIMEOUT)
    assert not report.ok and report.failure == "vacuous"
    assert "already True on the initial state" in report.reason
    assert report.broken_checks() == [1]


def test_check_that_never_becomes_true_is_rejected_as_unsatisfied(runtime):
    report = verify_scenario(scenario([LENT_B1, NEVER]), library_env(), runtime, TIMEOUT)
    assert not report.ok and report.failure == "unsatisfied"
    assert "still False" in report.reason and "b9" in report.reason
    assert report.broken_checks() == [1]


def test_check_returning_non_bool_is_rejected(runtime):
    truthy = CheckSpec(item="returns an int", code="def check_func(final_state):\n    return 1\n")
    report = verify_scenario(scenario([LENT_B1, truthy]), library_env(), runtime, TIMEOUT)
    assert report.failure == "check_error" and "did not return a bool" in report.reason


def test_check_that_raises_is_rejected_with_the_error(runtime):
    raising = CheckSpec(item="raises", code="def check_func(final_state):\n    return final_state['nope']['x']\n")
    report = verify_scenario(scenario([raising]), library_env(), runtime, TIMEOUT)
    assert report.failure == "check_error"
    assert report.checks[0].on_initial is None and "nope" in (report.checks[0].on_initial_error or "")


def test_check_that_loops_is_rejected_not_hung(runtime):
    looping = CheckSpec(item="loops", code="def check_func(final_state):\n    while True:\n        pass\n")
    report = verify_scenario(scenario([LENT_B1, looping]), library_env(), runtime, 0.5)
    assert report.failure == "check_error" and report.broken_checks() == [1]


def test_check_without_check_func_is_rejected(runtime):
    misnamed = CheckSpec(item="misnamed", code="def check(final_state):\n    return False\n")
    report = verify_scenario(scenario([misnamed]), library_env(), runtime, TIMEOUT)
    assert report.failure == "check_error"


def test_failing_plan_step_is_named_in_the_reason(runtime):
    bad_plan = [ToolCall(tool="lend_book", args={"book_id": "b3", "member": "Ana"})]
    report = verify_scenario(scenario([LENT_B1], plan=bad_plan), library_env(), runtime, TIMEOUT)
    assert report.failure == "solution" and "book not available" in report.reason


def test_scenario_without_checks_is_rejected(runtime):
    report = verify_scenario(scenario([]), library_env(), runtime, TIMEOUT)
    assert report.failure == "empty"


def test_score_is_fraction_passed_and_crashes_are_unscored(runtime):
    raising = CheckSpec(item="raises", code="def check_func(final_state):\n    raise ValueError('boom')\n")
    final = {**STATE, "books": {**STATE["books"], "b1": {**STATE["books"]["b1"], "status": "lent"}}}
    reward, all_passed, results = score_checks(library_env(), scenario([LENT_B1, LOAN_ANA, raising]), final, runtime)
    assert reward == round(1 / 3, 4) and all_passed is False
    assert [r.passed for r in results] == [True, False, None]
    assert "boom" in (results[2].error or "")


def _env_with(old: str, new: str):
    env = library_env()
    assert old in env.class_code
    return env.model_copy(update={"class_code": env.class_code.replace(old, new)})


def test_a_query_that_changes_state_on_its_second_call_in_the_plan_is_a_contract_failure(runtime):
    env = _env_with('''        return {"success": True, "data": self.books[book_id]}''', '''        self._asked = getattr(self, "_asked", 0) + 1
        if self._asked >= 2:
            self.books[book_id]["status"] = "lent"
        return {"success": True, "data": self.books[book_id]}''')
    plan = [ToolCall(tool="get_book", args={"book_id": "b1"}), ToolCall(tool="get_book", args={"book_id": "b1"}),
            ToolCall(tool="lend_book", args={"book_id": "b2", "member": "Ana"})]
    report = verify_scenario(scenario(plan=plan), env, runtime, TIMEOUT)
    assert [d.on_solved for d in report.checks] == [True, True]  # the checks alone would call it solved
    assert not report.ok and report.failure == "contract"
    assert "#1 query tool get_book changed state" in report.reason, report.reason
    assert [s.breach for s in report.solution] == [None, "query tool get_book changed state", None]


def test_a_refused_step_that_changes_state_is_a_contract_failure(runtime):
    env = _env_with('''            return {"success": False, "error": "book not available"}''', '''            self.loans.append({"book_id": book_id, "member": member})
            return {"success": False, "error": "book not available"}''')
    plan = [*scenario().reference_solution, ToolCall(tool="lend_book", args={"book_id": "b3", "member": "Ana"})]
    report = verify_scenario(scenario(plan=plan), env, runtime, TIMEOUT)
    assert not report.ok and report.failure == "contract"
    assert "#2 lend_book reported failure but changed state" in report.reason, report.reason


def test_a_plan_whose_replies_were_forged_is_a_contract_failure_and_no_check_judges_it(runtime):
    """Red team sandbox-4 F7: the env forges a successful lend, with the state to match, while the real
    call refused; the extra frame is found when the final state is read. Before, that forged state was
    verified (ok, every check True); nothing of the episode may be believed."""
    report = verify_scenario(scenario(), forging_library_env(), runtime, TIMEOUT)
    assert not report.ok and report.failure == "contract"
    assert "forged replies" in report.reason and "did not ask for" in report.reason, report.reason
    assert report.checks == [] and report.final_state is None


def test_a_check_that_raises_is_said_to_raise_not_to_return_a_non_bool(runtime):
    """Interop re-check F6a: a KeyError after the solution read "did not return a bool ...: Traceback ..."."""
    raising = CheckSpec(item="reads a missing key", code="def check_func(final_state):\n    return final_state['nope']\n")
    report = verify_scenario(scenario([LENT_B1, raising]), library_env(), runtime, TIMEOUT)
    assert report.failure == "check_error" and "raised" in report.reason and "KeyError" in report.reason
    assert "did not return a bool" not in report.reason and "Traceback" not in report.reason
