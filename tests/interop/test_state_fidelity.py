"""Spec: an imported scenario reaches the factory (store, gym, RL export) with the state EnvScaler's
runtime would give its env: the config's key order kept, and checks judged on the loaded episode.

EnvScaler loads a config with `json.load` (insertion order) and hands checks `get_state_info(env)`, all
of the instance's attributes, including those its constructor derives from the config. A tool that
lists `self.accounts` and a check that compares key order or reads the derived index must therefore
see the file's order and the constructor's attributes, in the import audit and everywhere after."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from envscaler_core.export.rl import rl_row
from envscaler_core.models import AcceptedEnv, Scenario
from envscaler_core.models.interop import ImportedScenario
from envscaler_core.scenarios import verify_scenario
from envscaler_core.store import Store
from tests.interop.conftest import run_import, settings_for, write_one_scenario_dir

CODE = '''from typing import Dict, List


class Ledger:
    def __init__(self, init_config: dict):
        self.accounts: Dict[str, dict] = {}
        self.init_config = init_config
        for key, value in init_config.items():
            setattr(self, key, value)
        self.by_id = {acc["id"]: acc for acc in self.accounts.values()}

    def list_accounts(self) -> dict:
        """
        List the account keys, in the ledger's own order.

        Returns:
            dict: {"success": True, "data": List[str]}
        """
        return {"success": True, "data": list(self.accounts)}

    def freeze(self, account_id: str) -> dict:
        """
        Freeze an account.

        Args:
            account_id (str): The account's id.

        Returns:
            dict: {"success": True, "message": str} or {"success": False, "error": str}
        """
        if account_id not in self.by_id:
            return {"success": False, "error": "Account not found"}
        self.by_id[account_id]["frozen"] = True
        return {"success": True, "message": f"Account {account_id} frozen"}
'''

ENV = {
    "env_id": "env_1", "environment_summary": "Ledger", "environment_introduction": "A ledger of accounts.",
    "state_space_definition": [], "constraints_rules": [], "env_class_name": "Ledger", "env_class_code": CODE,
    "operation_list": [{"operation_name": "list_accounts", "operation_description": "List.", "operation_type": "query"},
                       {"operation_name": "freeze", "operation_description": "Freeze.", "operation_type": "state_change"}],
    "tools": [{"type": "function", "function": {"name": "list_accounts", "description": "List the account keys.",
                                                "parameters": {"type": "object", "properties": {}, "required": []}}},
              {"type": "function", "function": {"name": "freeze", "description": "Freeze an account.",
                                                "parameters": {"type": "object", "properties": {
                                                    "account_id": {"type": "string"}}, "required": ["account_id"]}}}],
}
CONFIG = {"accounts": {"zeta": {"id": "Z9", "frozen": False, "meta": {"opened": "2024", "branch": "north"}},
                       "alpha": {"id": "A1", "frozen": False, "meta": {"opened": "2021", "branch": "south"}}}}
CHECKS = [
    ("Is Z9 frozen, through the ledger's index?", "def check_func(final_state):\n"
     "    return final_state['by_id']['Z9']['frozen'] is True"),
    ("Was Z9 open before, by the index the constructor built?", "def check_func(final_state):\n"
     "    return initial_state['by_id']['Z9']['frozen'] is False and final_state['by_id']['Z9']['frozen'] is True"),
    ("Is the ledger still in its own order?", "def check_func(final_state):\n"
     "    return list(final_state['accounts']) == ['zeta', 'alpha'] and "
     "list(final_state['accounts']['zeta']['meta']) == ['opened', 'branch'] and final_state['accounts']['zeta']['frozen']"),
]
PLAN = [{"name": "freeze", "arguments": {"account_id": "Z9"}}]


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory, sandbox_pool: Any) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("fidelity")
    scenario = {"env_id": "env_1", "env_class_name": "Ledger", "task_id": "1126-030001", "init_config": CONFIG,
                "task": "Freeze account Z9.", "checklist": [c for c, _ in CHECKS],
                "checklist_with_func": [{"check_item": c, "check_func": f} for c, f in CHECKS]}
    directory = write_one_scenario_dir(tmp / "envscaler", ENV, scenario, PLAN)
    settings = settings_for(tmp)
    report = run_import(directory, settings, sandbox_pool, run_id="fid")
    with Store.from_url(settings.store.url) as store:
        audited = store.query(ImportedScenario, run_id="fid")
        promoted = store.query(Scenario, run_id="fid")
        envs = store.query(AcceptedEnv, run_id="fid")
    return {"report": report, "audited": audited, "promoted": promoted, "envs": envs}


def test_a_scenario_whose_checks_read_constructor_derived_state_is_verified_and_promoted(imported: dict[str, Any]) -> None:
    assert [s.audit for s in imported["audited"]] == ["verified"], imported["audited"][0].reasons
    assert len(imported["promoted"]) == 1, imported["audited"][0].reasons


def test_the_stored_scenario_keeps_the_configs_key_order_at_every_depth(imported: dict[str, Any]) -> None:
    state = imported["promoted"][0].initial_state
    assert list(state["accounts"]) == ["zeta", "alpha"]
    assert list(state["accounts"]["zeta"]["meta"]) == ["opened", "branch"]


def test_the_stored_scenario_earns_full_reward_with_its_own_solution(imported: dict[str, Any], sandbox_pool: Any) -> None:
    report = verify_scenario(imported["promoted"][0], imported["envs"][0], sandbox_pool, 5.0)
    assert report.ok, report.reason
    assert report.final_state is not None and list(report.final_state["accounts"]) == ["zeta", "alpha"]


def test_the_rl_export_row_keeps_the_configs_key_order(imported: dict[str, Any]) -> None:
    scenario = imported["promoted"][0]
    row = rl_row(scenario.fingerprint, scenario, imported["envs"][0])
    state = json.loads(row["initial_state_json"])
    assert list(state["accounts"]) == ["zeta", "alpha"]
    assert list(state["accounts"]["alpha"]["meta"]) == ["opened", "branch"]


def test_a_listing_tool_answers_in_the_configs_order_in_a_factory_episode(imported: dict[str, Any],
                                                                         sandbox_pool: Any) -> None:
    env, scenario = imported["envs"][0], imported["promoted"][0]
    ep = sandbox_pool.open_episode(env.class_code, env.class_name, scenario.initial_state,
                                   tools=[t.model_dump() for t in env.tools])
    try:
        out = ep.call("list_accounts", {})
    finally:
        ep.close()
    assert out.ok and out.result["data"] == ["zeta", "alpha"]


def test_the_gym_rewards_the_solution_fully_with_the_loaded_initial_state(imported: dict[str, Any],
                                                                         sandbox_pool: Any) -> None:
    """EnvScaler hands checks `initial_state = get_state_info(env)`: the constructor's index included."""
    from envscaler_core.gym import ScenarioEnv

    gym = ScenarioEnv(imported["envs"][0], imported["promoted"], sandbox_pool)
    gym.reset(options={"scenario_index": 0})
    gym.step({"tool": "freeze", "args": {"account_id": "Z9"}})
    _, reward, terminated, _, info = gym.step({"done": True})
    assert terminated and reward == 1.0, info["check_results"]


def test_a_check_that_breaks_on_the_initial_state_is_named_as_such(tmp_path: Path, imported: dict[str, Any],
                                                                 sandbox_pool: Any) -> None:
    scenario = imported["promoted"][0]
    broken = scenario.model_copy(update={"checks": [scenario.checks[0].model_copy(update={
        "code": "def check_func(final_state):\n    return final_state['by_id']['Z9']['closed']"})]})
    report = verify_scenario(broken, imported["envs"][0], sandbox_pool, 5.0)
    assert report.failure == "check_error"
    assert "on the initial state" in (report.reason or "") and "KeyError" in (report.reason or "")
