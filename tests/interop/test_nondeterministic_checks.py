"""Spec: an imported check whose verdict depends on chance or the clock is `nondeterministic`, never
`verified` (outside check rt9-A, F1: `credits == 0 or random.random() < 0.5` came out `verified` 6 of 6
imports, and paid do-nothing episodes at random). EnvScaler runs such a check once and keeps it; the
import refuses it statically (the code names `random`, `time.time`, ...) and dynamically (evaluations of
one state in fresh units disagree)."""

from __future__ import annotations

from typing import Any

import pytest

from envscaler_core.models.interop import ImportedScenario
from envscaler_core.models.scenario import Scenario
from envscaler_core.store import Store
from tests.interop.conftest import check_scenarios, run_import, settings_for, write_scenarios_dir
from tests.interop.test_reserved_tool_names import ENV

NOTED = "'done' in final_state['notes']"
CHECKS = {
    "coin": f"import random\ndef check_func(final_state):\n    return {NOTED} or random.random() < 0.5\n",
    "clock": f"import time\ndef check_func(final_state):\n    return {NOTED} or time.time() > 1e12\n",
    "hidden": ("def check_func(final_state):\n"
               "    return __import__('ran' + 'dom').random() < 0.5\n"),
    "honest": f"def check_func(final_state):\n    return {NOTED}\n",
}


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory, sandbox_pool: Any) -> tuple[dict[str, ImportedScenario], list[Scenario]]:
    tmp = tmp_path_factory.mktemp("nondeterministic")
    directory = write_scenarios_dir(tmp / "envscaler", "env_inbox", ENV,
                                    check_scenarios(ENV, CHECKS, {"messages": [], "notes": []}),
                                    {tid: [{"name": "add_note", "arguments": {"text": "done"}}] for tid in CHECKS})
    # A fair coin agrees with itself on all n evaluations of a state with chance 2 * 0.5**n: at n = 8 that is
    # 1 in 128 per state, and CI met such a run once (the audit said `vacuous`); at the largest setting,
    # 20, it is about 1 in 500,000 per state.
    settings = settings_for(tmp, scen={"check_repeats": 20})
    run_import(directory, settings, sandbox_pool, run_id="coins")
    with Store.from_url(settings.store.url) as store:
        return ({s.task_id: s for s in store.query(ImportedScenario, run_id="coins")},
                store.query(Scenario, run_id="coins"))


@pytest.mark.parametrize(("task_id", "named"), [("coin", "random"), ("clock", "time.time")])
def test_a_check_naming_chance_or_the_clock_is_nondeterministic(imported: Any, task_id: str, named: str) -> None:
    scenario = imported[0][task_id]
    assert scenario.audit == "nondeterministic", (scenario.audit, scenario.reasons)
    assert any(named in r for r in scenario.reasons), scenario.reasons


def test_a_check_whose_evaluations_disagree_is_nondeterministic(imported: Any) -> None:
    scenario = imported[0]["hidden"]
    assert scenario.audit == "nondeterministic", (scenario.audit, scenario.reasons)
    assert any("evaluations of the same state" in r for r in scenario.reasons), scenario.reasons


def test_only_the_deterministic_check_is_verified_and_promoted(imported: Any) -> None:
    by_id, promoted = imported
    assert by_id["honest"].audit == "verified"
    assert [s.task for s in promoted] == ["Task honest."]
