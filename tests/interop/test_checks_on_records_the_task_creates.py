"""Spec: a check that reads a record the task creates raises on the initial state (the record is not
there yet) and is judged by what it says after a reference solution, as EnvScaler's reward, which only
runs checks on the final state, judges it. Before, any error on the initial state made the check
`check_error`, so such a scenario was lost (outside check F1: EnvScaler rewarded it 1.0). A check that
names something no state has (`NameError`), stays `check_error`;
one that still raises after the solution fails that solution."""

from __future__ import annotations

from typing import Any

import pytest

from envscaler_core.models.interop import ImportedScenario
from envscaler_core.models.scenario import Scenario
from envscaler_core.store import Store
from tests.interop.conftest import run_import, settings_for, write_scenarios_dir

CODE = '''from typing import Dict


class HotelDesk:
    def __init__(self, init_config: dict):
        self.hotel: Dict[str, dict] = {}

    def reserve(self, guest: str) -> dict:
        """Reserve a room for a guest."""
        rid = f"R{len(self.hotel['reservations']) + 1:03d}"
        self.hotel["reservations"][rid] = {"guest": guest}
        return {"success": True, "message": f"reservation {rid} created"}
'''
ENV = {"env_id": "env_hotel", "environment_summary": "Hotel", "environment_introduction": "A hotel desk.",
       "state_space_definition": [], "constraints_rules": [], "env_class_name": "HotelDesk", "env_class_code": CODE,
       "operation_list": [{"operation_name": "reserve", "operation_description": "Reserve.",
                           "operation_type": "state_change"}],
       "tools": [{"type": "function", "function": {"name": "reserve", "description": "Reserve a room for a guest.",
                                                   "parameters": {"type": "object", "properties": {
                                                       "guest": {"type": "string"}}, "required": ["guest"]}}}]}
CREATED = "def check_func(final_state):\n    return final_state['hotel']['reservations']['R001']['guest'] == 'ana'"
NEVER = "def check_func(final_state):\n    return final_state['hotel']['reservations']['R999']['guest'] == 'ana'"
NAME_ERROR = "def check_func(final_state):\n    return no_such_helper(final_state)"
PLAN = [{"name": "reserve", "arguments": {"guest": "ana"}}]


@pytest.fixture(scope="module")
def audited(tmp_path_factory: pytest.TempPathFactory, sandbox_pool: Any) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("created-records")
    directory = tmp / "envscaler"
    checks = {"solved": [CREATED], "unsolved": [CREATED], "still-raises": [CREATED, NEVER],
              "name-error": [CREATED, NAME_ERROR]}
    scenarios = [{"env_id": "env_hotel", "env_class_name": "HotelDesk", "task_id": tid,
                  "init_config": {"hotel": {"reservations": {}}}, "task": f"Reserve a room for Ana ({tid}).",
                  "checklist": ["reserved"] * len(funcs),
                  "checklist_with_func": [{"check_item": "reserved", "check_func": f} for f in funcs]}
                 for tid, funcs in checks.items()]
    write_scenarios_dir(directory, "env_hotel", ENV, scenarios, {"solved": PLAN, "still-raises": PLAN, "name-error": PLAN})
    settings = settings_for(tmp)
    run_import(directory, settings, sandbox_pool, run_id="created")
    with Store.from_url(settings.store.url) as store:
        return {"scenarios": {s.task_id: s for s in store.query(ImportedScenario, run_id="created")},
                "promoted": store.query(Scenario, run_id="created")}


def test_a_check_raising_only_before_the_record_exists_is_verified_by_the_solution(audited: dict[str, Any]) -> None:
    scenario = audited["scenarios"]["solved"]
    assert scenario.audit == "verified", scenario.reasons
    assert [c.on_solved for c in scenario.checks] == [True]


def test_such_a_verified_scenario_becomes_a_factory_scenario(audited: dict[str, Any]) -> None:
    assert [s.task for s in audited["promoted"]] == ["Reserve a room for Ana (solved)."], \
        audited["scenarios"]["solved"].reasons


def test_without_a_solution_it_is_unproven_and_the_check_says_it_raised_initially(audited: dict[str, Any]) -> None:
    scenario = audited["scenarios"]["unsolved"]
    assert scenario.audit == "unproven" and scenario.reasons == ["no reference solution yet"]
    [check] = scenario.checks
    assert "raises on the initial state" in (check.error or "") and "KeyError: 'R001'" in (check.error or "")


def test_a_check_that_still_raises_after_the_solution_fails_that_solution(audited: dict[str, Any]) -> None:
    scenario = audited["scenarios"]["still-raises"]  # a failed solution is no solution: the class stays
    assert scenario.audit == "unproven" and len(scenario.reasons) == 1
    assert scenario.reasons[0].startswith("after the reference solution") and "KeyError: 'R999'" in scenario.reasons[0]


def test_a_check_naming_something_no_state_has_is_check_error_at_once(audited: dict[str, Any]) -> None:
    scenario = audited["scenarios"]["name-error"]
    assert scenario.audit == "check_error"
    assert scenario.reasons == ["NameError: name 'no_such_helper' is not defined"]
