"""Spec: a scenario verified in the faithful form but not promoted because a tool's dict with integer
keys becomes string keys in the factory's plain JSON says so in its reason. Before, the reason only said
the check was "still False" after the solution (round-trip check 4, F5), and the known limits did not
list int keys."""

from __future__ import annotations

from typing import Any

import pytest

from envscaler_core.models.interop import ImportedScenario
from envscaler_core.models.scenario import Scenario
from envscaler_core.store import Store
from tests.interop.conftest import run_import, settings_for, write_scenarios_dir

CODE = '''from typing import Dict


class SeatDesk:
    def __init__(self, init_config: dict):
        self.bookings: Dict[int, dict] = {}

    def book_seat(self, passenger: str) -> dict:
        """Book a seat for a passenger."""
        n = len(self.bookings) + 1
        self.bookings[n] = {"passenger": passenger}
        return {"success": True, "message": f"booking {n}"}
'''
ENV = {"env_id": "env_seats", "environment_summary": "Seats", "environment_introduction": "A seat desk.",
       "state_space_definition": [], "constraints_rules": [], "env_class_name": "SeatDesk", "env_class_code": CODE,
       "operation_list": [{"operation_name": "book_seat", "operation_description": "Book.",
                           "operation_type": "state_change"}],
       "tools": [{"type": "function", "function": {"name": "book_seat", "description": "Book a seat for a passenger.",
                                                   "parameters": {"type": "object", "properties": {
                                                       "passenger": {"type": "string"}}, "required": ["passenger"]}}}]}
INT_KEY = "def check_func(final_state):\n    return final_state['bookings'].get(1, {}).get('passenger') == 'Ana'"


@pytest.fixture(scope="module")
def audited(tmp_path_factory: pytest.TempPathFactory, sandbox_pool: Any) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("int-keys")
    directory = tmp / "envscaler"
    record = {"env_id": "env_seats", "env_class_name": "SeatDesk", "task_id": "a1", "init_config": {"bookings": {}},
              "task": "Book a seat for Ana.", "checklist": ["Booking 1 is Ana's"],
              "checklist_with_func": [{"check_item": "Booking 1 is Ana's", "check_func": INT_KEY}]}
    write_scenarios_dir(directory, "env_seats", ENV, [record],
                        {"a1": [{"name": "book_seat", "arguments": {"passenger": "Ana"}}]})
    settings = settings_for(tmp)
    run_import(directory, settings, sandbox_pool, run_id="intkeys")
    with Store.from_url(settings.store.url) as store:
        [scenario] = store.query(ImportedScenario, run_id="intkeys")
        return {"scenario": scenario, "promoted": store.query(Scenario, run_id="intkeys")}


def test_it_is_verified_as_envscalers_runtime_scores_it(audited: dict[str, Any]) -> None:
    assert audited["scenario"].audit == "verified", audited["scenario"].reasons


def test_it_is_not_promoted(audited: dict[str, Any]) -> None:
    assert audited["promoted"] == []


def test_the_reason_names_the_int_keys_the_plain_json_form_turns_into_strings(audited: dict[str, Any]) -> None:
    [reason] = audited["scenario"].reasons
    assert "not promoted" in reason
    assert "dict keys that are not strings (an int key 1 becomes \"1\" there" in reason
