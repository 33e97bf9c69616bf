"""Spec: when the reference solution supplied for a scenario fails, the audit's reason says how it
failed (not "no reference solution yet", which sent the reader looking for a missing file entry);
a scenario given no solution still says that none was given."""

from __future__ import annotations

import json
from typing import Any

import pytest

from envscaler_core.interop.classify import NO_SOLUTION
from envscaler_core.models.interop import ImportedScenario
from envscaler_core.store import Store
from tests.interop.conftest import run_import, settings_for, write_solutions

CODE = '''class Counter:
    def __init__(self, init_config: dict):
        self.value = 0

    def bump(self, by: int) -> dict:
        """
        Add to the counter.

        Args:
            by (int): How much.

        Returns:
            dict: {"success": True, "message": str}
        """
        self.value += by
        return {"success": True, "message": f"now {self.value}"}
'''
ENV = {"env_id": "env_counter", "environment_summary": "Counter", "environment_introduction": "A counter.",
       "state_space_definition": [], "constraints_rules": [], "env_class_name": "Counter", "env_class_code": CODE,
       "operation_list": [{"operation_name": "bump", "operation_description": "Bump.", "operation_type": "state_change"}],
       "tools": [{"type": "function", "function": {"name": "bump", "description": "Add to the counter.", "parameters": {
           "type": "object", "properties": {"by": {"type": "integer"}}, "required": ["by"]}}}]}
CHECK = "def check_func(final_state):\n    return final_state['value'] == 5"


@pytest.fixture(scope="module")
def reasons(tmp_path_factory: pytest.TempPathFactory, sandbox_pool: Any) -> dict[str, list[str]]:
    tmp = tmp_path_factory.mktemp("solution-reasons")
    directory = tmp / "envscaler"
    directory.mkdir()
    (directory / "env_metadata.json").write_text(json.dumps({"env_counter": ENV}))
    scenarios = [{"env_id": "env_counter", "env_class_name": "Counter", "task_id": tid, "init_config": {"value": 0},
                  "task": f"Bring the counter to 5 ({tid}).", "checklist": ["five"],
                  "checklist_with_func": [{"check_item": "five", "check_func": CHECK}]}
                 for tid in ("short", "broken", "none")]
    (directory / "rl_scenario_metadata.json").write_text(json.dumps(scenarios))
    (directory / "sft_scenario_metadata.json").write_text("[]")
    write_solutions(directory, {"short": [{"name": "bump", "arguments": {"by": 4}}],
                                "broken": [{"name": "bump", "arguments": {"by": "five"}}]})
    settings = settings_for(tmp)
    run_import(directory, settings, sandbox_pool, run_id="reasons")
    with Store.from_url(settings.store.url) as store:
        return {s.task_id: s.reasons for s in store.query(ImportedScenario, run_id="reasons")}


def test_a_solution_that_leaves_a_check_false_is_the_reason(reasons: dict[str, list[str]]) -> None:
    assert reasons["short"] == ["the reference solution leaves a check False"]


def test_a_solution_whose_call_fails_names_that_failure(reasons: dict[str, list[str]]) -> None:
    [reason] = reasons["broken"]
    assert NO_SOLUTION not in reason and "bump" in reason, reason


def test_a_scenario_without_a_solution_still_says_none_was_given(reasons: dict[str, list[str]]) -> None:
    assert reasons["none"] == [NO_SOLUTION]
