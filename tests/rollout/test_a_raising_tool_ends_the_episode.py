"""Spec: in a factory env too, a tool whose method raises, or whose process dies in the call, ends the
episode with reward 0 in the gym and in rollouts (termination `tool_raised`), with a short observation (the
exception's last line, no traceback), and the filters drop it: the env broke, and a traceback must never
become reward-1.0 SFT data (differential check 2026-11-26, F1: the episode went on and paid 1.0). A refused
call stays an observation and the episode goes on there (the factory's contract), and parallel calls all run
(tests/rollout/test_scripted.py)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from envscaler_core.config import Settings
from envscaler_core.gym import ScenarioEnv
from envscaler_core.models import AcceptedEnv, ToolCall
from envscaler_core.models.env import ToolFunction, ToolSchema
from envscaler_core.rollout import ScriptedAgent, filter_trajectories, run_rollout
from tests.scenarios.helpers import LIBRARY_CODE, PLAN, library_env, scenario

BROKEN_CODE = LIBRARY_CODE + '''
    def renew_loan(self, book_id: str) -> dict:
        """Renew a loan.

        Args:
            book_id: the book id
        """
        if book_id == "die":
            import os
            os._exit(3)
        return {"success": True, "data": self.books[book_id]["due"]}
'''


def broken_env() -> AcceptedEnv:
    """library_env() with a tool that raises KeyError (books have no 'due') and dies on book 'die'."""
    env = library_env()
    renew = ToolSchema(function=ToolFunction(name="renew_loan", description="Renew a loan.", parameters={
        "type": "object", "properties": {"book_id": {"type": "string"}}, "required": ["book_id"]}))
    return env.model_copy(update={"env_id": "env_library_test", "class_code": BROKEN_CODE,
                                  "tools": [*env.tools, renew]})


RAISES = ToolCall(tool="renew_loan", args={"book_id": "b1"})
DIES = ToolCall(tool="renew_loan", args={"book_id": "die"})


@pytest.mark.parametrize(("call", "says"), [(RAISES, "renew_loan raised KeyError: 'due'"),
                                            (DIES, "the env's process died during renew_loan")])
def test_the_gym_episode_ends_at_zero(sandbox_pool: Any, call: ToolCall, says: str) -> None:
    gym = ScenarioEnv(broken_env(), [scenario()], sandbox_pool)
    gym.reset(options={"scenario_index": 0})
    obs, reward, terminated, truncated, info = gym.step({"tool": call.tool, "args": call.args})
    assert terminated and not truncated and reward == 0.0
    assert says in json.loads(obs)["error"] and "Traceback" not in obs
    assert info["all_passed"] is False and info["check_results"] == [] and info["ended"] == says
    with pytest.raises(RuntimeError, match="call reset"):
        gym.step({"tool": PLAN[0].tool, "args": PLAN[0].args})


def test_the_rollout_ends_at_zero_and_the_filters_drop_it(sandbox_pool: Any) -> None:
    agent = ScriptedAgent([PLAN[0], RAISES, PLAN[1]])
    traj = asyncio.run(run_rollout(broken_env(), scenario(), sandbox_pool, None, Settings(), agent=agent))
    assert traj.termination == "tool_raised" and traj.reward == 0.0 and not traj.all_passed
    assert traj.steps == 2 and traj.error == "renew_loan raised KeyError: 'due'"
    assert traj.final_state["books"]["b1"]["status"] == "lent", "the calls before it ran"
    kept, dropped = filter_trajectories([traj], Settings().rollout.model_copy(update={"require_all_passed": False}))
    assert not kept and dropped


def test_a_refused_call_in_a_factory_env_is_an_observation_and_the_episode_goes_on(sandbox_pool: Any) -> None:
    agent = ScriptedAgent([ToolCall(tool="lend_book", args={"book_id": "b1"}), *PLAN])
    traj = asyncio.run(run_rollout(broken_env(), scenario(), sandbox_pool, None, Settings(), agent=agent))
    assert traj.termination == "agent_done" and traj.reward == 1.0 and traj.tool_errors == 1
