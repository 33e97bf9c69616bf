"""Spec: an env imported from EnvScaler's files plays EnvScaler's runtime's rules when a call goes wrong, in
the gym (loaded from the exported RL file, which carries the rules) and in rollouts: a tool that raises, or a
call its runtime runs into a TypeError (missing or extra argument, a data attribute or class constant
called), ends the episode with reward 0; an unknown name is an invalid action and the episode goes on; only
the first tool call of an assistant message runs (differential check 2026-11-26, F1-F3: the gym and
rollouts went on and paid 1.0, and ran all parallel calls, 1.0 where EnvScaler gives 0.25).

Expected rewards are EnvScaler's own: its runtime (interact_with_env/envscaler_env, `EnvScalerNonConvRLEnv`)
was run on `pantry_envscaler`'s files with each call sequence followed by chat_with_user "Task Completed":
the solution 1.0; RAISES `ValueError: day is out of range for month`, terminated, 0.0; MISSING_ARG
`TypeError ... missing 1 required positional argument: 'amount'`, 0.0; EXTRA_ARG `... unexpected keyword
argument 'verbose'`, 0.0; DATA_ATTRIBUTE `'dict' object is not callable`, 0.0; CLASS_CONSTANT `'tuple'
object is not callable`, 0.0; UNKNOWN "Error: Invalid action", goes on, 1.0; the solution's three calls in one
message, then "Task Completed": 0.25."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from envscaler_core.config import Settings
from envscaler_core.export import export_run, row_to_records
from envscaler_core.gym import ScenarioEnv, load_rl_set
from envscaler_core.models import AcceptedEnv, Scenario, ToolCall
from envscaler_core.rollout import ScriptedAgent, filter_trajectories, run_rollout
from envscaler_core.store import Store
from tests.rollout import pantry_envscaler as pantry

DONE = {"tool": "chat_with_user", "args": {"content": "Task Completed"}}


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory, sandbox_pool: Any) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("pantry")
    settings, env, scenario = pantry.import_pantry(tmp, sandbox_pool)
    with Store.from_url(settings.store.url) as store:
        export_run(store, "pantry", settings, tmp / "out", formats=["rl"])
    return {"env": env, "scenario": scenario, "rl": tmp / "out" / "pantry" / "rl_scenarios.parquet",
            "pool": sandbox_pool}


@pytest.fixture
def gym(imported: dict[str, Any]) -> ScenarioEnv:
    (env,) = load_rl_set(imported["rl"], imported["pool"])
    return env


def play(gym: ScenarioEnv, calls: list[dict[str, Any]]) -> tuple[list[str], float, dict[str, Any]]:
    """Each call as a gym action, then the message to the user, until the episode ends."""
    gym.reset(options={"scenario_index": 0})
    observations = []
    for action in [*({"tool": c["name"], "args": c["arguments"]} for c in calls), DONE]:
        obs, reward, terminated, truncated, info = gym.step(action)
        observations.append(obs)
        if terminated or truncated:
            return observations, reward, info
    raise AssertionError("the episode never ended")


def test_the_import_marks_its_env_and_the_rl_export_carries_the_mark(imported: dict[str, Any]) -> None:
    assert imported["env"].episode_rules == "envscaler"
    import pyarrow.parquet as pq

    (row,) = pq.read_table(imported["rl"]).to_pylist()
    assert row["episode_rules"] == "envscaler"
    assert row_to_records(row)[0].episode_rules == "envscaler"


def test_the_solution_earns_what_envscaler_gives(gym: ScenarioEnv) -> None:
    _, reward, info = play(gym, pantry.SOLUTION)
    assert reward == 1.0 and info["all_passed"]


def test_a_tool_that_raises_ends_the_gym_episode_at_zero(gym: ScenarioEnv) -> None:
    observations, reward, info = play(gym, [pantry.RAISES, *pantry.SOLUTION])
    assert len(observations) == 1, "the episode ended at the raising call"
    error = json.loads(observations[0])["error"]
    assert "ValueError: day is out of range for month" in error and "reward 0" in error
    assert "Traceback" not in error and "File" not in error
    assert reward == 0.0 and info["all_passed"] is False and info["ended"]


@pytest.mark.parametrize(("call", "says"), [
    (pantry.MISSING_ARG, "missing required argument(s) 'amount'"),
    (pantry.EXTRA_ARG, "unexpected argument(s) 'verbose'"),
    (pantry.DATA_ATTRIBUTE, "'items' is a data attribute"),
    (pantry.CLASS_CONSTANT, "'UNITS' is a data attribute"),
])
def test_a_call_envscaler_runs_into_a_type_error_ends_the_gym_episode_at_zero(
        gym: ScenarioEnv, call: dict[str, Any], says: str) -> None:
    observations, reward, info = play(gym, [call, *pantry.SOLUTION])
    assert len(observations) == 1 and says in json.loads(observations[0])["error"]
    assert reward == 0.0 and info["all_passed"] is False and "TypeError" in info["ended"]


def test_an_unknown_name_is_an_invalid_action_and_the_episode_goes_on(gym: ScenarioEnv) -> None:
    observations, reward, _ = play(gym, [pantry.UNKNOWN, *pantry.SOLUTION])
    assert len(observations) == 5 and "unknown tool" in json.loads(observations[0])["error"]
    assert reward == 1.0


def _roll(imported: dict[str, Any], plan: list[dict[str, Any]], per_message: int = 1) -> Any:
    agent = ScriptedAgent([ToolCall(tool=c["name"], args=c["arguments"]) for c in plan], per_message=per_message)
    env: AcceptedEnv = imported["env"]
    scenario: Scenario = imported["scenario"]
    return asyncio.run(run_rollout(env, scenario, imported["pool"], None, Settings(), agent=agent))


def test_a_tool_that_raises_ends_the_rollout_at_zero_and_is_never_sft_data(imported: dict[str, Any]) -> None:
    traj = _roll(imported, [pantry.RAISES, *pantry.SOLUTION])
    assert traj.termination == "tool_raised" and traj.reward == 0.0 and not traj.all_passed
    assert [m["role"] for m in traj.messages] == ["system", "user", "assistant", "tool"]
    assert "ValueError: day is out of range for month" in json.loads(traj.messages[-1]["content"])["error"]
    kept, dropped = filter_trajectories([traj], Settings().rollout.model_copy(update={"require_all_passed": False}))
    assert not kept and "ended the episode with reward 0" in dropped[0][1][0]


def test_a_missing_argument_ends_the_rollout_at_zero(imported: dict[str, Any]) -> None:
    traj = _roll(imported, [pantry.MISSING_ARG, *pantry.SOLUTION])
    assert traj.termination == "tool_raised" and traj.reward == 0.0 and traj.steps == 1


def test_only_the_first_of_parallel_calls_runs_and_the_rest_are_counted(imported: dict[str, Any]) -> None:
    traj = _roll(imported, pantry.SOLUTION, per_message=3)
    assert traj.reward == 0.25 and traj.dropped_calls == 2
    assistant = traj.messages[2]
    assert [c["function"]["name"] for c in assistant["tool_calls"]] == ["restock"]
    assert [m["tool_call_id"] for m in traj.messages if m["role"] == "tool"] == [assistant["tool_calls"][0]["id"]]


def test_the_calls_that_did_not_run_count_as_tool_errors(imported: dict[str, Any]) -> None:
    """As under the factory's rules, a call the agent wrote that did not run is a refused call (red team 9,
    F4): `max_tool_errors` bounds them; the recorded message never shows them."""
    traj = _roll(imported, pantry.SOLUTION, per_message=3)
    assert traj.dropped_calls == 2 and traj.tool_errors == 2
    kept, dropped = filter_trajectories([traj], Settings().rollout.model_copy(
        update={"require_all_passed": False, "max_tool_errors": 0}))
    assert not kept and "2 tool errors > 0" in dropped[0][1]


def test_rows_exported_before_the_rules_were_carried_are_refused_by_name(imported: dict[str, Any],
                                                                         tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    from envscaler_core.export.rl import RLRowError

    (row,) = pq.read_table(imported["rl"]).to_pylist()
    del row["episode_rules"]
    (tmp_path / "old.jsonl").write_text(json.dumps(row) + "\n")
    with pytest.raises(RLRowError, match=r"old.jsonl:1: missing field\(s\) episode_rules .*export the run again"):
        load_rl_set(tmp_path / "old.jsonl", imported["pool"])
