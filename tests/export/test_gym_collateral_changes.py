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
