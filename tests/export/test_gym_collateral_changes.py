"""Spec: the gym's reward stays EnvScaler's checklist fraction, and the episode's last `info` says how
many state changes fall outside the task's footprint (outside check rt9-A, F3: a task-blind policy that
revoked every grant and granted every pair earned 1.0, and nothing showed what else it changed). An RL
row carries no footprint; the gym derives it from the row's reference solution, which `row_sha256`
already covers, replayed once per scenario in a fresh episode."""

from __future__ import annotations

from typing import Any

from envscaler_core.gym import ScenarioEnv
from envscaler_core.models.scenario import Scenario
from tests.rollout.test_collateral_changes import BLIND, GRANTED, PLAN, REVOKED, STATE, clinic_env
from tests.rollout.test_collateral_list_changes import REMOVE_E1, _call, queue_env
from tests.rollout.test_collateral_list_changes import SCENARIO as QUEUE_SCENARIO

SCENARIO = Scenario(env_id="env_clinic", initial_state=STATE, task="Revoke G-002 and give PR-1 access to P-03.",
                    checklist=[REVOKED.item, GRANTED.item], checks=[REVOKED, GRANTED], reference_solution=PLAN,
                    status="verified")


def play(runtime: Any, scenario: Scenario, calls: list[Any]) -> tuple[float, dict[str, Any]]:
    gym = ScenarioEnv(clinic_env(), [scenario], runtime)
    try:
        gym.reset(options={"scenario_index": 0})
        for call in calls:
            gym.step({"tool": call.tool, "args": call.args})
        _, reward, _, _, info = gym.step({"done": True})
        return reward, info
    finally:
        gym.close()


def test_a_task_blind_policy_keeps_its_reward_and_info_counts_its_collateral_changes(sandbox_pool: Any) -> None:
    reward, info = play(sandbox_pool, SCENARIO, BLIND)
    assert reward == 1.0 and info["all_passed"]
    assert info["collateral_changes"] == 7
    assert info["collateral_paths"][:2] == ["/grants/G-001/status", "/grants/G-003/status"]


def test_the_reference_solution_has_no_collateral_changes(sandbox_pool: Any) -> None:
    reward, info = play(sandbox_pool, SCENARIO, PLAN)
    assert reward == 1.0 and info["collateral_changes"] == 0 and info["collateral_paths"] == []


def test_without_a_reference_solution_the_count_is_unknown(sandbox_pool: Any) -> None:
    reward, info = play(sandbox_pool, SCENARIO.model_copy(update={"reference_solution": []}), BLIND)
    assert reward == 1.0 and info["collateral_changes"] is None


def test_the_gym_names_list_records_by_id_and_counts_changes_undone_before_the_end(sandbox_pool: Any) -> None:
    """rt10-A F2 and F3: the records a removal shifts are not in the footprint the gym derives, and a change
    undone before `done` still counts (every path any step changed)."""
    gym = ScenarioEnv(queue_env(), [QUEUE_SCENARIO], sandbox_pool)
    try:
        gym.reset(options={"scenario_index": 0})
        for call in [REMOVE_E1, _call("set_owner", entry_id="E3", owner="mallory"),
                     _call("set_owner", entry_id="E2", owner="mallory"), _call("set_owner", entry_id="E2", owner="bob")]:
            gym.step({"tool": call.tool, "args": call.args})
        _, reward, _, _, info = gym.step({"done": True})
    finally:
        gym.close()
    assert reward == 1.0 and info["collateral_changes"] == 2
    assert info["collateral_paths"] == ['/queue/[id="E2"]/owner', '/queue/[id="E3"]/owner']
