"""Spec: one scenario's code or data never decides another scenario's verdict or its env's, and a
scenario is judged against exactly the class validated for its env (red team 2, findings 02, 03, 10, 12).

One import of files written in EnvScaler's formats, run on one thread so the order the files give is
the order things happen in (what the attacks relied on):
* `env_loops`: three scenarios whose check never returns, then a scenario whose honest check takes a
  moment: the loops may only fail their own scenarios (02);
* `env_bad_first` / `env_bad_last`: the same two scenarios in both orders, one with counters as a list
  instead of an object: the env is accepted either way, the bad one's check raising there is its own
  problem (03; since F1 that makes it unproven with the raise noted, not check_error);
* `env_overcap`: its only scenario's init_config is over the sandbox's state cap: that scenario is
  check_error "over the cap", and the env's verdict does not blame it (10);
* `env_swap`: its code also defines `Swap(Counter)`, whose *query* tool writes state; a scenario naming
  `Swap`, with a sidecar solution that only works under `Swap`, must not be run, verified or promoted
  under `Counter` (12).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from envscaler_core.interop.solutions import SOLUTIONS_FILE, dump, solution_entry, solutions_document
from envscaler_core.models.interop import ImportedEnv, ImportedScenario
from envscaler_core.models.scenario import Scenario, ToolCall
from envscaler_core.store import Store
from tests.interop.conftest import FILES, run_import, settings_for

EMPTY_STATE_REASON = "validated on an empty state, since no scenario's initial state loaded: "  # envjob.py

COUNTER = '''
class Counter:
    def __init__(self, init_config: dict):
        self.counters = {}
        self.log = []

    def get_count(self, name: str) -> dict:
        if name not in self.counters:
            return {"success": False, "error": "no such counter"}
        return {"success": True, "data": self.counters[name]}

    def increment(self, name: str) -> dict:
        if name not in self.counters:
            return {"success": False, "error": "no such counter"}
        self.counters[name] += 1
        self.log.append(name)
        return {"success": True, "message": "ok"}
'''
SWAP = '''

class Swap(Counter):
    def get_count(self, name):
        self.counters["a"] = 2
        return {"success": True, "data": 2}
'''
A_IS_2 = "def check_func(final_state):\n    return final_state['counters']['a'] == 2\n"
SLOW_A_IS_2 = "import time\ndef check_func(final_state):\n    time.sleep(0.4)\n    return final_state['counters']['a'] == 2\n"
LOOPS = "def check_func(final_state):\n    while True:\n        pass\n"
GOOD = {"counters": {"a": 1, "b": 5}, "log": []}
BAD = {"counters": [1, 2], "log": []}  # a list where the class keeps an object


def _env(env_id: str, code: str = COUNTER) -> dict[str, Any]:
    tool = lambda name: {"type": "function", "function": {  # noqa: E731
        "name": name, "description": name, "parameters": {"type": "object", "properties": {"name": {"type": "string"}},
                                                          "required": ["name"]}}}
    return {"env_id": env_id, "environment_summary": "counters", "environment_introduction": "Named counters.",
            "state_space_definition": [], "constraints_rules": ["counters never go negative"],
            "operation_list": [{"operation_name": "get_count", "operation_type": "query"},
                               {"operation_name": "increment", "operation_type": "state_change"}],
            "env_class_name": "Counter", "env_class_code": code, "tools": [tool("get_count"), tool("increment")]}


def _scenario(env_id: str, task_id: str, config: Any, check: str = A_IS_2, cls: str = "Counter") -> dict[str, Any]:
    return {"env_id": env_id, "env_class_name": cls, "task_id": task_id, "init_config": config,
            "task": "Increment counter a once.", "checklist": ["a is 2"],
            "checklist_with_func": [{"check_item": "a is 2", "check_func": check}]}


@pytest.fixture(scope="module")
def audited(tmp_path_factory: pytest.TempPathFactory, sandbox_pool: Any) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("independence")
    directory = tmp / "envscaler"
    directory.mkdir()
    envs = {e: _env(e) for e in ("env_loops", "env_bad_first", "env_bad_last", "env_overcap")}
    envs["env_swap"] = _env("env_swap", COUNTER + SWAP)
    overcap = {"counters": {"a": 1}, "log": ["x" * 1100 * 1024]}  # over the sandbox's 1 MiB state cap
    swapped = _scenario("env_swap", "swapped", GOOD, cls="Swap")
    records = [*[_scenario("env_loops", f"loop-{k}", GOOD, LOOPS) for k in range(3)],
               _scenario("env_loops", "slow-honest", GOOD, SLOW_A_IS_2),
               _scenario("env_bad_first", "bad", BAD), _scenario("env_bad_first", "good", GOOD),
               _scenario("env_bad_last", "good", GOOD), _scenario("env_bad_last", "bad", BAD),
               _scenario("env_overcap", "overcap", overcap),
               _scenario("env_swap", "honest", GOOD), swapped]
    (directory / FILES[0]).write_text(json.dumps(envs))
    (directory / FILES[1]).write_text(json.dumps(records))
    (directory / FILES[2]).write_text("[]")
    plan = [ToolCall(tool="get_count", args={"name": "a"})]  # solves `swapped` only under Swap
    (directory / SOLUTIONS_FILE).write_bytes(dump(solutions_document([solution_entry(swapped, plan)])))
    settings = settings_for(tmp, scen={"check_timeout_s": 1.5})
    report = run_import(directory, settings, sandbox_pool, run_id="independence", threads=1)
    with Store.from_url(settings.store.url) as store:
        scenarios = {(s.env_id, s.task_id): s for s in store.query(ImportedScenario, run_id="independence")}
        envs_read = {e.env_id: e for e in store.query(ImportedEnv, run_id="independence")}
        promoted = store.query(Scenario, run_id="independence")
    return {"report": report, "scenarios": scenarios, "envs": envs_read, "promoted": promoted}


def _audit(audited: dict[str, Any], env_id: str, task_id: str) -> str:
    return audited["scenarios"][(env_id, task_id)].audit


def test_looping_checks_fail_only_their_own_scenarios_not_a_slower_honest_check_after_them(audited: dict[str, Any]) -> None:
    assert [_audit(audited, "env_loops", f"loop-{k}") for k in range(3)] == ["check_error"] * 3
    assert _audit(audited, "env_loops", "slow-honest") == "unproven"


@pytest.mark.parametrize("env_id", ["env_bad_first", "env_bad_last"])
def test_a_scenarios_bad_init_config_is_its_own_problem_whatever_the_order(audited: dict[str, Any], env_id: str) -> None:
    assert audited["envs"][env_id].status == "accepted"
    # its check raises on the bad data (a list where the class keeps an object): False there, as
    # EnvScaler's reward counts it (F1), so the scenario is unproven, and its check says why
    assert (_audit(audited, env_id, "good"), _audit(audited, env_id, "bad")) == ("unproven", "unproven")
    [bad] = audited["scenarios"][(env_id, "bad")].checks
    [good] = audited["scenarios"][(env_id, "good")].checks
    assert "raises on the initial state" in (bad.error or "") and good.error is None


def test_the_only_scenario_over_the_state_cap_is_its_own_check_error_and_the_env_is_not_blamed_for_it(
        audited: dict[str, Any]) -> None:
    scenario = audited["scenarios"][("env_overcap", "overcap")]
    assert scenario.audit == "check_error" and "over the cap" in scenario.reasons[0]
    env = audited["envs"]["env_overcap"]
    assert env.status == "accepted" or all(r.startswith(EMPTY_STATE_REASON) for r in env.reasons)


def test_a_scenario_naming_another_class_of_the_env_code_is_refused_not_verified(audited: dict[str, Any]) -> None:
    swapped = audited["scenarios"][("env_swap", "swapped")]
    assert swapped.audit == "check_error" and swapped.reference_solution == []
    assert "'Swap' is not its env's class 'Counter'" in swapped.reasons[0]
    assert _audit(audited, "env_swap", "honest") == "unproven"


def test_nothing_is_promoted_under_a_class_it_was_not_verified_with(audited: dict[str, Any]) -> None:
    assert audited["promoted"] == []
