"""Spec: an env imported from EnvScaler plays its runtime's `step` on results and states our JSON wire cannot
carry (differential re-check 2026-11-26, F1/F2/F6). The observation of a result JSON cannot carry is its
text (`f"{result}"`); when that text raises, the tool raised: the episode ends at 0; the state a raising tool
left is the episode's state, as EnvScaler records it. Factory rules are unchanged: such a result is refused
and its change undone, a raising tool's change is rolled back.

Expected values are EnvScaler's own: its runtime (`EnvScalerNonConvRLEnv`) was run by hand on
`library_envscaler`'s files, each plan followed by chat_with_user "Task Completed": OPAQUE observes
"{'success': True, 'ref': <dynamic_env.Opaque object at ...>}", goes on, 1.0, b1 lent to m1; BADREPR
"Error: <Exception>" (ValueError: no text for this object), terminated, 0.0; BOOM "Error: <Exception>"
(RuntimeError: ledger write failed), terminated, 0.0, recorded state b1 {"status": "lent", "holder": "m1"};
KEEP (stores an Opaque() as `self.ref`) 1.0, where here the call is refused and undone (documented limit)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from envscaler_core.config import Settings
from envscaler_core.gym import ScenarioEnv
from envscaler_core.models import ToolCall
from envscaler_core.rollout import ScriptedAgent, run_rollout
from tests.rollout import library_envscaler as lib

LENT = {"title": "Dune", "status": "lent", "holder": "m1"}


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory, sandbox_pool: Any) -> dict[str, Any]:
    _, env, scenario = lib.import_library(tmp_path_factory.mktemp("library"), sandbox_pool)
    return {"env": env, "scenario": scenario, "pool": sandbox_pool}


def _roll(imported: dict[str, Any], plan: list[dict[str, Any]], rules: str = "envscaler") -> Any:
    agent = ScriptedAgent([ToolCall(tool=c["name"], args=c["arguments"]) for c in plan])
    env = imported["env"].model_copy(update={"episode_rules": rules})
    return asyncio.run(run_rollout(env, imported["scenario"], imported["pool"], None, Settings(), agent=agent))


def test_a_result_json_cannot_carry_is_observed_as_its_text_and_its_change_kept(imported: dict[str, Any]) -> None:
    traj = _roll(imported, [lib.OPAQUE])
    observed = json.loads(traj.messages[3]["content"])
    assert observed.startswith("{'success': True, 'ref': <envcode.Opaque object at ")
    assert traj.final_state["books"]["b1"] == LENT and traj.reward == 1.0 and traj.termination == "agent_done"


def test_a_result_whose_text_raises_ends_the_episode_at_zero(imported: dict[str, Any]) -> None:
    traj = _roll(imported, [lib.BADREPR, lib.LEND])
    assert traj.termination == "tool_raised" and traj.reward == 0.0 and traj.steps == 1
    assert "ValueError: no text for this object" in json.loads(traj.messages[-1]["content"])["error"]


def test_the_state_a_raising_tool_left_is_the_final_state(imported: dict[str, Any]) -> None:
    traj = _roll(imported, [lib.BOOM])
    assert traj.termination == "tool_raised" and traj.reward == 0.0
    assert traj.final_state["books"]["b1"] == LENT


def test_a_state_json_cannot_carry_is_still_refused_and_undone(imported: dict[str, Any]) -> None:
    traj = _roll(imported, [lib.KEEP])  # EnvScaler: 1.0; here the documented limit (docs/interop.md)
    assert "state is not JSON-serialisable" in json.loads(traj.messages[3]["content"])["error"]
    assert traj.final_state["books"]["b1"]["status"] == "available" and traj.reward == 0.0


def test_factory_rules_still_refuse_such_results_and_roll_raising_tools_back(imported: dict[str, Any]) -> None:
    opaque = _roll(imported, [lib.OPAQUE], rules="factory")
    assert json.loads(opaque.messages[3]["content"])["error_kind"] == "unserializable"
    assert opaque.final_state["books"]["b1"]["status"] == "available"
    boom = _roll(imported, [lib.BOOM], rules="factory")
    assert boom.termination == "tool_raised" and boom.final_state["books"]["b1"]["status"] == "available"


def test_the_gym_observes_the_text_and_keeps_the_state(imported: dict[str, Any]) -> None:
    gym = ScenarioEnv(imported["env"], [imported["scenario"]], imported["pool"])
    gym.reset(options={"scenario_index": 0})
    obs, _, terminated, _, _ = gym.step({"tool": "lend_book", "args": lib.OPAQUE["arguments"]})
    assert not terminated and "<envcode.Opaque object at " in json.loads(obs)
    _, reward, terminated, _, _ = gym.step({"tool": "chat_with_user", "args": {"content": "Task Completed"}})
    assert terminated and reward == 1.0


def test_the_gym_ends_at_zero_when_the_results_text_raises(imported: dict[str, Any]) -> None:
    gym = ScenarioEnv(imported["env"], [imported["scenario"]], imported["pool"])
    gym.reset(options={"scenario_index": 0})
    _, reward, terminated, _, info = gym.step({"tool": "lend_book", "args": lib.BADREPR["arguments"]})
    assert terminated and reward == 0.0 and "ValueError" in info["ended"]
