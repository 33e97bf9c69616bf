"""Spec: a check that raises what is not an `Exception` (SystemExit, KeyboardInterrupt) after the reference
solution is `check_error`, saying EnvScaler's runtime crashes on it (its run_check_function catches
Exception only); `exit()` in a check, a NameError in our jail, says that EnvScaler's runtime has it and
crashes there (interop re-check, F5: these were `unproven` "after the reference solution: SystemExit: 0")."""

from __future__ import annotations

from typing import Any

import pytest

from envscaler_core.models.interop import ImportedScenario
from envscaler_core.store import Store
from tests.interop.conftest import check_scenarios, run_import, settings_for, write_scenarios_dir
from tests.interop.test_reserved_tool_names import ENV

AFTER = "def check_func(final_state):\n    if final_state['notes']:\n        {}\n    return False\n"
CHECKS = {"sysexit": AFTER.format("raise SystemExit(0)"), "kbint": AFTER.format("raise KeyboardInterrupt"),
          "exit_call": AFTER.format("exit(0)")}


@pytest.fixture(scope="module")
def scenarios(tmp_path_factory: pytest.TempPathFactory, sandbox_pool: Any) -> dict[str, ImportedScenario]:
    tmp = tmp_path_factory.mktemp("checks-exit")
    directory = write_scenarios_dir(tmp / "envscaler", "env_inbox", ENV,
                                    check_scenarios(ENV, CHECKS, {"messages": [], "notes": []}),
                                    {tid: [{"name": "add_note", "arguments": {"text": "done"}}] for tid in CHECKS})
    settings = settings_for(tmp)
    run_import(directory, settings, sandbox_pool, run_id="exits")
    with Store.from_url(settings.store.url) as store:
        return {s.task_id: s for s in store.query(ImportedScenario, run_id="exits")}


@pytest.mark.parametrize(("task_id", "raised"), [("sysexit", "SystemExit"), ("kbint", "KeyboardInterrupt")])
def test_a_check_raising_a_base_exception_is_a_check_error_that_crashes_envscaler(
        scenarios: dict[str, ImportedScenario], task_id: str, raised: str) -> None:
    scenario = scenarios[task_id]
    assert scenario.audit == "check_error", scenario.reasons
    [reason] = scenario.reasons
    assert raised in reason and "crashes" in reason, reason


def test_exit_in_a_check_says_envscalers_runtime_has_it_and_crashes_there(
        scenarios: dict[str, ImportedScenario]) -> None:
    scenario = scenarios["exit_call"]
    assert scenario.audit == "check_error", scenario.reasons
    [reason] = scenario.reasons
    assert "NameError" in reason and "exit()" in reason and "crash" in reason, reason
