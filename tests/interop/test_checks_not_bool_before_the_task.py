"""Spec: a check that returns a non-bool on the initial state (`return loan and loan['member_id'] == 'M7'`
gives None there, `rs and ...` gives []) is "not True there", as a raise is: EnvScaler's
`run_check_function` keeps only an `isinstance(result, bool)` result and its reward counts anything else
0, and it only ever runs checks on the final state. Such a check is judged after the reference solution
(outside check 3, F2: it was `not_bool` at once and the solution was never replayed, while EnvScaler
rewarded it 1.0). A non-bool on the SOLVED state still scores 0 there, so it stays `not_bool`."""

from __future__ import annotations

from typing import Any

import pytest

from envscaler_core.models.interop import ImportedScenario
from envscaler_core.models.scenario import Scenario
from envscaler_core.store import Store
from tests.interop.conftest import run_import, settings_for, write_scenarios_dir

CODE = '''from typing import Dict


class LoanDesk:
    def __init__(self, init_config: dict):
        self.loans: Dict[str, dict] = {}

    def lend(self, loan_id: str, member_id: str) -> dict:
        """Lend a book to a member under a new loan id."""
        self.loans[loan_id] = {"member_id": member_id, "nights": 3}
        return {"success": True, "message": f"loan {loan_id} created"}
'''
ENV = {"env_id": "env_loans", "environment_summary": "Loans", "environment_introduction": "A loan desk.",
       "state_space_definition": [], "constraints_rules": [], "env_class_name": "LoanDesk", "env_class_code": CODE,
       "operation_list": [{"operation_name": "lend", "operation_description": "Lend.",
                           "operation_type": "state_change"}],
       "tools": [{"type": "function", "function": {"name": "lend", "description": "Lend a book to a member.",
                                                   "parameters": {"type": "object", "properties": {
                                                       "loan_id": {"type": "string"}, "member_id": {"type": "string"}},
                                                       "required": ["loan_id", "member_id"]}}}]}
NONE_FIRST = ("def check_func(final_state):\n    loan = final_state['loans'].get('L9')\n"
              "    return loan and loan['member_id'] == 'M7'")
LIST_FIRST = ("def check_func(final_state):\n    rs = [l for l in final_state['loans'].values() if l['member_id'] == 'M7']\n"
              "    return rs and rs[0]['nights'] == 3")
STAYS_NON_BOOL = "def check_func(final_state):\n    return len(final_state['loans'])"
PLAN = [{"name": "lend", "arguments": {"loan_id": "L9", "member_id": "M7"}}]


@pytest.fixture(scope="module")
def audited(tmp_path_factory: pytest.TempPathFactory, sandbox_pool: Any) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("not-bool-initially")
    directory = tmp / "envscaler"
    checks = {"none-then-true": [NONE_FIRST], "list-then-true": [LIST_FIRST], "unsolved": [NONE_FIRST],
              "int-after-solution": [NONE_FIRST, STAYS_NON_BOOL]}
    scenarios = [{"env_id": "env_loans", "env_class_name": "LoanDesk", "task_id": tid,
                  "init_config": {"loans": {}}, "task": f"Lend a book to M7 ({tid}).",
                  "checklist": ["lent"] * len(funcs),
                  "checklist_with_func": [{"check_item": "lent", "check_func": f} for f in funcs]}
                 for tid, funcs in checks.items()]
    write_scenarios_dir(directory, "env_loans", ENV, scenarios,
                        {"none-then-true": PLAN, "list-then-true": PLAN, "int-after-solution": PLAN})
    settings = settings_for(tmp)
    run_import(directory, settings, sandbox_pool, run_id="notbool")
    with Store.from_url(settings.store.url) as store:
        return {"scenarios": {s.task_id: s for s in store.query(ImportedScenario, run_id="notbool")},
                "promoted": store.query(Scenario, run_id="notbool")}


@pytest.mark.parametrize("task_id", ["none-then-true", "list-then-true"])
def test_a_check_returning_a_falsy_non_bool_before_the_task_is_verified_by_the_solution(
        audited: dict[str, Any], task_id: str) -> None:
    scenario = audited["scenarios"][task_id]
    assert scenario.audit == "verified", scenario.reasons
    assert [(c.on_initial, c.on_solved) for c in scenario.checks] == [(None, True)]


def test_such_a_scenario_becomes_a_factory_scenario(audited: dict[str, Any]) -> None:
    assert sorted(s.task for s in audited["promoted"]) == ["Lend a book to M7 (list-then-true).",
                                                            "Lend a book to M7 (none-then-true)."]


def test_without_a_solution_it_is_unproven_and_the_check_says_what_it_returned(audited: dict[str, Any]) -> None:
    scenario = audited["scenarios"]["unsolved"]
    assert scenario.audit == "unproven" and scenario.reasons == ["no reference solution yet"]
    [check] = scenario.checks
    assert check.error == ("not a bool on the initial state (0 there, as EnvScaler's reward counts it): "
                           "check_func returned NoneType, not bool")


def test_a_non_bool_after_the_solution_stays_not_bool(audited: dict[str, Any]) -> None:
    scenario = audited["scenarios"]["int-after-solution"]
    assert scenario.audit == "not_bool"
    assert [c.outcome for c in scenario.checks] == ["verified", "not_bool"]
    assert scenario.reasons == ["after the reference solution: check_func returned int, not bool"]


def test_the_solution_that_showed_the_non_bool_is_kept_for_the_export(audited: dict[str, Any]) -> None:
    """`export --format envscaler` writes it to the solutions sidecar, so a re-import is not_bool again
    instead of merely unproven."""
    scenario = audited["scenarios"]["int-after-solution"]
    assert [(c.tool, c.args) for c in scenario.reference_solution] == [("lend", {"loan_id": "L9", "member_id": "M7"})]
    assert scenario.solution_origin == "file"
