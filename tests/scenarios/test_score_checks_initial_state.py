"""Spec: `score_checks(env, scenario, final_state, runtime)`, called as documented, pays what the gym,
rollouts and verification pay (red team 9, F5). The checks' `initial_state` is the state right after
loading, attributes the constructor derives included; without the `initial_state=` keyword the documented
call judged against the scenario's raw JSON, and a check reading a derived attribute paid 0.0 (KeyError)."""

from __future__ import annotations

from typing import Any

from envscaler_core.gym import ScenarioEnv
from envscaler_core.models.env import AcceptedEnv
from envscaler_core.models.scenario import CheckSpec, Scenario
from envscaler_core.scenarios import score_checks
from tests.scenarios.helpers import PLAN, library_env, scenario

DERIVING = library_env().class_code.replace(
    'self.loans = cfg.get("loans", [])', 'self.loans = cfg.get("loans", [])\n        self.loan_count = len(self.loans)')
MORE_LOANS = CheckSpec(item="More loans than at the start", code=(
    "def check_func(final_state):\n    return len(final_state['loans']) > initial_state['loan_count']\n"))


def _deriving_env() -> AcceptedEnv:
    assert DERIVING != library_env().class_code
    return library_env().model_copy(update={"class_code": DERIVING})


def _solved_in_the_gym(env: AcceptedEnv, sc: Scenario, runtime: Any) -> tuple[float, dict[str, Any]]:
    gym = ScenarioEnv(env, [sc], runtime)
    try:
        gym.reset()
        for call in PLAN:
            gym.step({"tool": call.tool, "args": call.args})
        _, reward, _, _, info = gym.step({"done": True})
        return reward, info["final_state"]
    finally:
        gym.close()


def test_the_documented_call_pays_what_the_gym_pays(runtime: Any) -> None:
    env, sc = _deriving_env(), scenario([MORE_LOANS])
    gym_reward, final_state = _solved_in_the_gym(env, sc, runtime)
    reward, all_passed, results = score_checks(env, sc, final_state, runtime)
    assert gym_reward == reward == 1.0 and all_passed and results[0].error is None


def test_the_loaded_initial_state_can_still_be_given(runtime: Any) -> None:
    env, sc = _deriving_env(), scenario([MORE_LOANS])
    _, final_state = _solved_in_the_gym(env, sc, runtime)
    loaded = {**sc.initial_state, "loan_count": 1}
    assert score_checks(env, sc, final_state, runtime, initial_state=loaded)[0] == 1.0
    assert score_checks(env, sc, final_state, runtime, initial_state={**loaded, "loan_count": 9})[0] == 0.0
