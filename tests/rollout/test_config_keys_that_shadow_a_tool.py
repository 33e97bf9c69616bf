"""Spec: under an imported env's rules, a scenario whose init_config has a key named like a tool method
(`{"get_book": 7}`) makes calling that tool a TypeError that ends the episode at 0, in the gym and in
rollouts: EnvScaler's loader sets every config key as an attribute, the instance's `get_book` is then the
int, and its `getattr(env, name)(**args)` raises "'int' object is not callable". Before (differential
round 3, F4) the gym answered "'get_book' is not a method" and went on, paying 1.0 after the solution.

Expected values are EnvScaler's own: its runtime (`EnvScalerNonConvRLEnv`) was run on the checker's library
files with config `{"renew": 7, ...}`: renew(...), then lend, then "Task Completed": `TypeError: 'int'
object is not callable`, terminated, 0.0."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from envscaler_core.config import Settings
from envscaler_core.gym import ScenarioEnv
from envscaler_core.models import AcceptedEnv, Scenario, ToolCall
from envscaler_core.rollout import ScriptedAgent, run_rollout
from envscaler_core.store import Store
from tests.interop.conftest import run_import, settings_for, write_scenarios_dir
from tests.rollout import library_envscaler as lib

SHADOWED = {**lib.SCENARIO, "task_id": "L2", "task": "Lend book b1 to member m1 (shadowed).",
            "init_config": {**lib.SCENARIO["init_config"], "get_book": 7}}
GET = {"name": "get_book", "arguments": {"book_id": "b1"}}


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory, sandbox_pool: Any) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("shadow")
    directory = write_scenarios_dir(tmp / "envscaler", "env_lib", lib.ENV, [lib.SCENARIO, SHADOWED],
                                    {"L1": lib.SOLUTION, "L2": lib.SOLUTION})
    settings = settings_for(tmp)
    run_import(directory, settings, sandbox_pool, run_id="shadow")
    with Store.from_url(settings.store.url) as store:
        [env] = store.query(AcceptedEnv, run_id="shadow")
        [scenario] = [s for s in store.query(Scenario, run_id="shadow") if "get_book" in s.initial_state]
    return {"env": env, "scenario": scenario, "pool": sandbox_pool}


def test_calling_the_shadowed_tool_ends_the_gym_episode_at_zero(imported: dict[str, Any]) -> None:
    gym = ScenarioEnv(imported["env"], [imported["scenario"]], imported["pool"])
    gym.reset(options={"scenario_index": 0})
    try:
        obs, reward, terminated, _, info = gym.step({"tool": GET["name"], "args": GET["arguments"]})
    finally:
        gym.close()
    assert terminated and reward == 0.0 and "TypeError" in info["ended"]
    assert "'get_book' is a data attribute" in json.loads(obs)["error"]


def test_calling_the_shadowed_tool_ends_the_rollout_at_zero(imported: dict[str, Any]) -> None:
    plan = [ToolCall(tool=c["name"], args=c["arguments"]) for c in [GET, *lib.SOLUTION]]
    traj = asyncio.run(run_rollout(imported["env"], imported["scenario"], imported["pool"], None, Settings(),
                                   agent=ScriptedAgent(plan)))
    assert traj.termination == "tool_raised" and traj.reward == 0.0 and traj.steps == 1


def test_the_scenario_is_still_solved_without_the_shadowed_tool(imported: dict[str, Any]) -> None:
    plan = [ToolCall(tool=c["name"], args=c["arguments"]) for c in lib.SOLUTION]
    traj = asyncio.run(run_rollout(imported["env"], imported["scenario"], imported["pool"], None, Settings(),
                                   agent=ScriptedAgent(plan)))
    assert traj.termination == "agent_done" and traj.reward == 1.0


def test_an_env_whose_only_scenario_shadows_a_tool_is_judged_on_its_class(tmp_path: Any, sandbox_pool: Any) -> None:
    # EnvScaler's runtime scores this scenario's solution 1.0; the shadowed tool is the scenario's data, not
    # a fault of the class, so the env is validated on an empty state instead of being rejected
    directory = write_scenarios_dir(tmp_path / "envscaler", "env_lib", lib.ENV, [SHADOWED], {"L2": lib.SOLUTION})
    settings = settings_for(tmp_path)
    run_import(directory, settings, sandbox_pool, run_id="alone")
    with Store.from_url(settings.store.url) as store:
        assert len(store.query(AcceptedEnv, run_id="alone")) == 1
        assert [s.task for s in store.query(Scenario, run_id="alone")] == [SHADOWED["task"]]
