"""Spec: a `NameError` or missing module a check reaches only on the initial state's branch does not make
the check `check_error` when a reference solution makes it True: EnvScaler's runtime runs checks on the
final state only and scores such a scenario 1.0 (interop re-check, F4). The same raise after the solution
is still `check_error`, and the verified scenario is promoted. A module a check may not import is refused on
any branch (`nondeterministic`: where its ImportError is raised decides the verdict, outside check rt14-A F3)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from envscaler_core.models import Scenario
from envscaler_core.models.interop import ImportedScenario
from envscaler_core.store import Store
from tests.interop.conftest import run_import, settings_for, write_solutions
from tests.interop.test_reserved_tool_names import ENV

BRANCH = "def check_func(final_state):\n    if final_state['notes']:\n        return 'done' in final_state['notes']\n    {}\n"
CHECKS = {
    "name_initially": BRANCH.format("return undefined_helper(final_state)"),
    "module_initially": BRANCH.format("import numpy\n    return False"),
    "name_always": "def check_func(final_state):\n    return undefined_helper(final_state)\n",
}
NOTE = [{"name": "add_note", "arguments": {"text": "done"}}]


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory, sandbox_pool: Any) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("code-errors-initially")
    directory = tmp / "envscaler"
    directory.mkdir()
    (directory / "env_metadata.json").write_text(json.dumps({"env_inbox": ENV}))
    scenarios = [{"env_id": "env_inbox", "env_class_name": "InboxDesk", "task_id": tid,
                  "init_config": {"messages": [], "notes": []}, "task": f"Task {tid}.", "checklist": [tid],
                  "checklist_with_func": [{"check_item": tid, "check_func": src}]} for tid, src in CHECKS.items()]
    (directory / "rl_scenario_metadata.json").write_text(json.dumps(scenarios))
    (directory / "sft_scenario_metadata.json").write_text("[]")
    write_solutions(directory, {tid: NOTE for tid in CHECKS})
    settings = settings_for(tmp)
    run_import(directory, settings, sandbox_pool, run_id="codeerr")
    with Store.from_url(settings.store.url) as store:
        return {"scenarios": {s.task_id: s for s in store.query(ImportedScenario, run_id="codeerr")},
                "promoted": store.query(Scenario, run_id="codeerr", where={"status": "verified"})}


def test_a_raise_on_the_initial_branch_only_is_verified_by_the_solution(imported: dict[str, Any]) -> None:
    scenario = imported["scenarios"]["name_initially"]
    assert scenario.audit == "verified", scenario.reasons


def test_a_module_a_check_may_not_import_is_refused_on_the_initial_branch_too(imported: dict[str, Any]) -> None:
    scenario = imported["scenarios"]["module_initially"]
    assert scenario.audit == "nondeterministic" and "import numpy" in scenario.reasons[0], scenario.reasons


def test_the_same_raise_after_the_solution_is_still_a_check_error(imported: dict[str, Any]) -> None:
    scenario = imported["scenarios"]["name_always"]
    assert scenario.audit == "check_error" and "NameError" in scenario.reasons[0], scenario.reasons


def test_the_verified_ones_are_promoted(imported: dict[str, Any]) -> None:
    assert sorted(s.task for s in imported["promoted"]) == ["Task name_initially."]
