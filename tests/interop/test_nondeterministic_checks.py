"""Spec: an imported check whose verdict depends on chance or the clock is `nondeterministic`, never
`verified` (outside check rt9-A, F1: `credits == 0 or random.random() < 0.5` came out `verified` 6 of 6
imports, and paid do-nothing episodes at random). EnvScaler runs such a check once and keeps it; the
import refuses it statically (the code names `random`, `time.time`, ...) and dynamically (evaluations of
one state in fresh units disagree)."""

from __future__ import annotations

import json
import subprocess
from typing import Any

import pytest

from envscaler_core.models.interop import ImportedScenario
from envscaler_core.models.scenario import Scenario
from envscaler_core.store import Store
from tests.interop.conftest import check_scenarios, run_import, settings_for, write_scenarios_dir
from tests.interop.test_reserved_tool_names import ENV

NOTED = "'done' in final_state['notes']"
WORDS = [f"w{i}" for i in range(12)]
CHECKS = {
    "coin": f"import random\ndef check_func(final_state):\n    return {NOTED} or random.random() < 0.5\n",
    "clock": f"import time\ndef check_func(final_state):\n    return {NOTED} or time.time() > 1e12\n",
    "hidden": ("def check_func(final_state):\n"
               "    return __import__('ran' + 'dom').random() < 0.5\n"),
    "alias_clock": f"from datetime import datetime as D\ndef check_func(final_state):\n    return {NOTED} or D.now().year > 2100\n",
    "strftime": f"import time\ndef check_func(final_state):\n    return {NOTED} or time.strftime('%Y') > '2100'\n",
    "host": f"import os\ndef check_func(final_state):\n    return {NOTED} or os.cpu_count() > 4096\n",
    "honest": f"def check_func(final_state):\n    return {NOTED}\n",
    "envscaler_style": ("import json\nimport re\nfrom datetime import datetime\ndef check_func(final_state):\n"
                        "    when = datetime.strptime('2026-01-02', '%Y-%m-%d')\n"
                        f"    return {NOTED} and when.year == 2026 and re.match('d', json.dumps(final_state['notes'])[2:]) is not None\n"),
}


def _order_under_seed_zero(pool: Any) -> list[str]:
    out = subprocess.run([pool.backend.python, "-S", "-c", f"import json; print(json.dumps(list(set({WORDS!r}))))"],
                         capture_output=True, text=True, env={"PYTHONHASHSEED": "0"}, check=True)
    return json.loads(out.stdout)


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory, sandbox_pool: Any) -> tuple[dict[str, ImportedScenario], list[Scenario]]:
    tmp = tmp_path_factory.mktemp("nondeterministic")
    # passes every evaluation under hash seed 0, every episode's, and (1 in 12! squared) no other
    checks = {**CHECKS, "hash_order": f"def check_func(final_state):\n    return {NOTED} and "
                                      f"list(set({WORDS!r})) == {_order_under_seed_zero(sandbox_pool)!r}\n"}
    directory = write_scenarios_dir(tmp / "envscaler", "env_inbox", ENV,
                                    check_scenarios(ENV, checks, {"messages": [], "notes": []}),
                                    {tid: [{"name": "add_note", "arguments": {"text": "done"}}] for tid in checks})
    # A fair coin agrees with itself on all n evaluations of a state with chance 2 * 0.5**n: at n = 8 that is
    # 1 in 128 per state, and CI met such a run once (the audit said `vacuous`); at the largest setting,
    # 20, it is about 1 in 500,000 per state.
    settings = settings_for(tmp, scen={"check_repeats": 20})
    run_import(directory, settings, sandbox_pool, run_id="coins")
    with Store.from_url(settings.store.url) as store:
        return ({s.task_id: s for s in store.query(ImportedScenario, run_id="coins")},
                store.query(Scenario, run_id="coins"))


@pytest.mark.parametrize(("task_id", "named"), [("coin", "random"), ("clock", "time.time"), ("alias_clock", "D.now"),
                                               ("strftime", "time.strftime"), ("host", "import os")])
def test_a_check_naming_chance_or_the_clock_is_nondeterministic(imported: Any, task_id: str, named: str) -> None:
    scenario = imported[0][task_id]
    assert scenario.audit == "nondeterministic", (scenario.audit, scenario.reasons)
    assert any(named in r for r in scenario.reasons), scenario.reasons


def test_a_check_hiding_the_module_it_imports_is_nondeterministic(imported: Any) -> None:
    # Once caught only by its evaluations disagreeing (with chance 1 - 2**-k for k repeats); a computed
    # import is now refused by name (the repeats themselves: tests/scenarios/test_nondeterministic_checks.py).
    scenario = imported[0]["hidden"]
    assert scenario.audit == "nondeterministic", (scenario.audit, scenario.reasons)
    assert any("__import__" in r for r in scenario.reasons), scenario.reasons


def test_a_check_hanging_on_str_hash_order_is_nondeterministic(imported: Any) -> None:
    # EnvScaler's runtime, a seed per process, paid such a solution about 1 run in 4 (outside check rt10-C, F2).
    scenario = imported[0]["hash_order"]
    assert scenario.audit == "nondeterministic", (scenario.audit, scenario.reasons)
    assert any("nondeterministic: gave True, False" in r for r in scenario.reasons), scenario.reasons


def test_only_the_deterministic_check_is_verified_and_promoted(imported: Any) -> None:
    by_id, promoted = imported
    assert by_id["honest"].audit == "verified"
    assert by_id["envscaler_style"].audit == "verified", by_id["envscaler_style"].reasons
    assert sorted(s.task for s in promoted) == ["Task envscaler_style.", "Task honest."]
