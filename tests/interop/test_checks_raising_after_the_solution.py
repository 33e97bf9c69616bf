"""Spec: a check that raises after a reference solution for a reason no state causes (a name it never
defines) is `check_error`, as docs/interop.md says; before, the fold of the attempt threw that class away
and the scenario stayed `unproven` (round-trip check 4, F3). A raise the state may cause (`KeyError` on a
record) after the solution still leaves it `unproven`: a wrong solution causes it as surely as a wrong
check (tests/interop/test_checks_on_records_the_task_creates.py). Checks get the modules
docs/scenarios_and_rollouts.md (step 3) lists, numpy included out (the verdict is in docs/interop.md): a
check importing one, even only after the solution, is refused as `nondeterministic` naming it, since where
the import fails decides the verdict (outside check rt14-A F3)."""

from __future__ import annotations

from typing import Any

import pytest

from envscaler_core.models.interop import ImportedScenario
from envscaler_core.store import Store
from tests.interop.conftest import run_import, settings_for, write_scenarios_dir
from tests.interop.test_checks_on_records_the_task_creates import CREATED, ENV, PLAN

LAZY_NAME = ("def check_func(final_state):\n    if not final_state['hotel']['reservations']:\n        return False\n"
             "    return undefined_helper(final_state)")
NUMPY = "import numpy\ndef check_func(final_state):\n    return bool(numpy.all([True]))"


@pytest.fixture(scope="module")
def audited(tmp_path_factory: pytest.TempPathFactory, sandbox_pool: Any) -> dict[str, ImportedScenario]:
    tmp = tmp_path_factory.mktemp("raising-after")
    directory = tmp / "envscaler"
    checks = {"lazy-name": [CREATED, LAZY_NAME], "numpy": [CREATED, NUMPY]}
    scenarios = [{"env_id": "env_hotel", "env_class_name": "HotelDesk", "task_id": tid,
                  "init_config": {"hotel": {"reservations": {}}}, "task": f"Reserve a room for Ana ({tid}).",
                  "checklist": ["reserved"] * len(funcs),
                  "checklist_with_func": [{"check_item": "reserved", "check_func": f} for f in funcs]}
                 for tid, funcs in checks.items()]
    write_scenarios_dir(directory, "env_hotel", ENV, scenarios, {tid: PLAN for tid in checks})
    settings = settings_for(tmp)
    run_import(directory, settings, sandbox_pool, run_id="raising")
    with Store.from_url(settings.store.url) as store:
        return {s.task_id: s for s in store.query(ImportedScenario, run_id="raising")}


def test_an_undefined_name_raised_only_after_the_solution_is_check_error(audited: dict[str, ImportedScenario]) -> None:
    scenario = audited["lazy-name"]
    assert scenario.audit == "check_error", (scenario.audit, scenario.reasons)
    assert "name 'undefined_helper' is not defined" in scenario.reasons[0]
    assert scenario.checks[1].error and scenario.checks[1].error.startswith("after the reference solution")


def test_such_a_scenario_keeps_its_solution_as_the_evidence(audited: dict[str, ImportedScenario]) -> None:
    assert [c.tool for c in audited["lazy-name"].reference_solution] == ["reserve"]


def test_a_check_importing_numpy_is_refused_naming_the_module(audited: dict[str, ImportedScenario]) -> None:
    scenario = audited["numpy"]
    assert scenario.audit == "nondeterministic", (scenario.audit, scenario.reasons)
    assert "the check names import numpy (not a module a check may import)" in scenario.reasons[0], scenario.reasons
