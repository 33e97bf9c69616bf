"""Spec: the gym-style ScenarioEnv (reset/step/close) and building it from the exported RL file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from envscaler_core.config import Settings
from envscaler_core.export import RLRowError, export_run
from envscaler_core.gym import ScenarioEnv, load_rl_set
from envscaler_core.scenarios import score_checks
from envscaler_core.store import Store
from tests.export.records import Populated, lend_dune, verified
from tests.scenarios.helpers import LENT_B1, PLAN, STATE, VACUOUS, forging_library_env, library_env, scenario


@pytest.fixture
def gym(runtime) -> ScenarioEnv:  # type: ignore[no-untyped-def]
    env = ScenarioEnv(library_env(), [verified(scenario()), lend_dune()], runtime)
    yield env
    env.close()


def _replay(gym: ScenarioEnv, actions: list[dict]) -> list[tuple]:
    return [gym.step(a) for a in [*actions, {"done": True}]]


def test_replaying_the_reference_solution_earns_reward_one(gym: ScenarioEnv) -> None:
    obs, info = gym.reset(options={"scenario_index": 0})
    assert obs == scenario().task and info["scenario_fp"] == verified(scenario()).fingerprint
    assert [t["function"]["name"] for t in info["tools"]] == ["list_books", "get_book", "lend_book"]
    steps = _replay(gym, [{"tool": c.tool, "args": c.args} for c in PLAN])
    assert [r for _, r, _, _, _ in steps] == [0.0, 0.0, 1.0]
    assert [t for _, _, t, _, _ in steps] == [False, False, True]
    assert json.loads(steps[0][0])["success"] is True
    assert steps[-1][4]["all_passed"] and steps[-1][4]["final_state"]["books"]["b2"]["status"] == "lent"


def test_openai_tool_call_actions_work_the_same(gym: ScenarioEnv) -> None:
    gym.reset(options={"scenario_index": 0})
    calls = [{"id": f"c{i}", "type": "function", "function": {"name": c.tool, "arguments": json.dumps(c.args)}}
             for i, c in enumerate(PLAN)]
    assert _replay(gym, calls)[-1][1] == 1.0


def test_doing_nothing_earns_the_initial_state_score(runtime) -> None:  # type: ignore[no-untyped-def]
    sc = scenario([LENT_B1, VACUOUS])
    initial_score, _, _ = score_checks(library_env(), sc, STATE, runtime)
    gym = ScenarioEnv(library_env(), [sc], runtime)
    gym.reset()
    _, reward, terminated, truncated, _ = gym.step({"done": True})
    assert reward == initial_score == 0.5 and terminated and not truncated


def test_bad_actions_are_observations_and_the_episode_goes_on(gym: ScenarioEnv) -> None:
    gym.reset(options={"scenario_index": 0})
    obs, reward, terminated, _, info = gym.step({"tool": "teleport_book", "args": {"book_id": "b1"}})
    assert "error" in json.loads(obs) and info["is_error"] and reward == 0.0 and not terminated
    obs, _, _, _, info = gym.step({"launch": "rockets"})
    assert json.loads(obs)["error_kind"] == "action" and info["is_error"]
    obs, _, _, _, _ = gym.step({"tool": "get_book", "args": {"book_id": "b1", "colour": "red"}})
    assert json.loads(obs)["error_kind"] == "schema"
    assert _replay(gym, [{"tool": c.tool, "args": c.args} for c in PLAN])[-1][1] == 1.0


def test_the_step_budget_truncates_and_still_scores(runtime) -> None:  # type: ignore[no-untyped-def]
    gym = ScenarioEnv(library_env(), [verified(scenario())], runtime, max_steps=1)
    gym.reset()
    _, reward, terminated, truncated, _ = gym.step({"tool": "lend_book", "args": {"book_id": "b1", "member": "Ana"}})
    assert truncated and not terminated and reward == 0.5
    with pytest.raises(RuntimeError, match="call reset"):
        gym.step({"done": True})


def test_the_seed_picks_the_scenario_deterministically(gym: ScenarioEnv) -> None:
    picks = {seed: gym.reset(seed=seed)[1]["scenario_index"] for seed in range(12)}
    assert picks == {seed: gym.reset(seed=seed)[1]["scenario_index"] for seed in range(12)}
    assert set(picks.values()) == {0, 1}


def test_scenarios_must_belong_to_the_env_and_have_checks(runtime) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match="no checks"):
        ScenarioEnv(library_env(), [scenario([])], runtime)
    other = scenario().model_copy(update={"env_id": "env_other"})
    with pytest.raises(ValueError, match="another env"):
        ScenarioEnv(library_env(), [other], runtime)


@pytest.mark.parametrize("name", ["rl_scenarios.jsonl", "rl_scenarios.parquet"])
def test_the_exported_rl_file_builds_envs_that_reward_the_reference_solution(
    store: Store, populated: Populated, runtime, tmp_path: Path, name: str  # type: ignore[no-untyped-def]
) -> None:
    export_run(store, populated.run_id, Settings(), tmp_path, formats=["rl"])
    (gym,) = load_rl_set(tmp_path / populated.run_id / name, runtime)
    assert gym.env.env_id == "env_library_test" and len(gym.scenarios) == 2
    for index, sc in enumerate(gym.scenarios):
        gym.reset(options={"scenario_index": index})
        assert _replay(gym, [{"tool": c.tool, "args": c.args} for c in sc.reference_solution])[-1][1] == 1.0
    gym.close()


def test_a_broken_rl_file_names_the_line(tmp_path: Path, runtime) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "rl.jsonl"
    path.write_text('{"scenario_fp": "x"}\n')
    with pytest.raises(RLRowError, match=r"rl.jsonl:1: missing field"):
        load_rl_set(path, runtime)


def test_an_envscaler_style_class_gets_the_scenario_state_in_the_gym(runtime) -> None:  # type: ignore[no-untyped-def]
    """Empty containers and a stored init_config: the state is there only because the env is loaded the
    way EnvScaler's runtime loads it (construct, then set every top-level key of the config)."""
    from tests.validation.envscaler_style_env import envscaler_library_env

    gym = ScenarioEnv(envscaler_library_env(), [verified(scenario())], runtime)
    try:
        gym.reset()
        obs, *_ = gym.step({"tool": "get_book", "args": {"book_id": "b1"}})
        assert json.loads(obs) == {"success": True, "data": STATE["books"]["b1"]}
        steps = _replay(gym, [{"tool": c.tool, "args": c.args} for c in PLAN])
        final = steps[-1][4]["final_state"]
        # one copy of the config for construction and the keys set after it, as in EnvScaler: the stored
        # init_config is the live containers
        assert steps[-1][1] == 1.0 and final["init_config"] == {k: final[k] for k in STATE}
    finally:
        gym.close()


def test_a_call_and_done_in_one_action_runs_nothing_and_the_episode_goes_on(gym: ScenarioEnv) -> None:
    gym.reset(options={"scenario_index": 0})
    obs, reward, terminated, truncated, info = gym.step({"tool": "lend_book", "args": {"book_id": "b1", "member": "Ana"},
                                                        "done": True})
    assert json.loads(obs)["error_kind"] == "action" and info["is_error"] and not (terminated or truncated)
    assert reward == 0.0
    _, _, terminated, _, _ = gym.step({"done": True})
    assert terminated


@pytest.mark.parametrize("options, error", [
    ([1], TypeError), ({"scenario_fp": "abc"}, ValueError), ({"scenario_index": "0"}, TypeError),
    ({"scenario_index": True}, TypeError), ({"scenario_index": 99}, ValueError),
])
def test_bad_reset_options_are_refused_by_name(gym: ScenarioEnv, options: object, error: type) -> None:
    with pytest.raises(error, match="scenario_index|option"):
        gym.reset(options=options)  # type: ignore[arg-type]


@pytest.mark.parametrize("action, says", [
    ({"done": 1}, "'done' must be the boolean true, got 1 (int): to end the episode, send {'done': true}"),
    ({"done": "false"}, "'done' must be the boolean true, got \"false\" (a string)"),
    ({"done": False}, "'done' must be the boolean true, got false: to go on, send a tool call instead"),
    ({"done": True, "tool": None}, "not both: this one has 'done' and 'tool'"),
])
def test_a_refused_done_action_says_what_is_wrong_with_it(gym: ScenarioEnv, action: dict, says: str) -> None:
    gym.reset(options={"scenario_index": 0})
    obs, reward, terminated, truncated, info = gym.step(action)
    error = json.loads(obs)["error"]
    assert says in error and error.endswith("(nothing was run)"), error
    assert ("not both" in error) == ("tool" in action)
    assert info["is_error"] and reward == 0.0 and not (terminated or truncated)


def test_an_episode_whose_replies_were_forged_earns_nothing(runtime) -> None:  # type: ignore[no-untyped-def]
    """Red team sandbox-4 F7: every lend is refused but reported (forged) as done, with a state to match;
    before, `done` paid 1.0 on that forged state. The call after the forged frame is a crash, which ends
    the episode there (a tool whose process failed ends it at 0: differential check F1)."""
    gym = ScenarioEnv(forging_library_env().model_copy(update={"env_id": "env_library_test"}),
                      [verified(scenario())], runtime)
    try:
        gym.reset(options={"scenario_index": 0})
        steps = [gym.step({"tool": c.tool, "args": c.args}) for c in PLAN]
        _, reward, terminated, _, info = steps[-1]
        assert reward == 0.0 and terminated and not info["all_passed"] and info["check_results"] == []
        assert info["final_state"] is None and "did not ask for" in info["breach"]
    finally:
        gym.close()


def test_arguments_over_the_step_cap_are_refused_before_parsing(gym: ScenarioEnv) -> None:
    """Red team round 6, F6: a 50 MB argument reached the tool, costing the host 450 MB."""
    from envscaler_core.gym import MAX_ARGUMENT_CHARS

    gym.reset(options={"scenario_index": 0})
    huge = {"id": "c0", "type": "function", "function": {"name": "get_book", "arguments": " " * MAX_ARGUMENT_CHARS + "{}"}}
    obs, reward, terminated, _, info = gym.step(huge)
    assert info["is_error"] and reward == 0.0 and not terminated
    assert f"over the {MAX_ARGUMENT_CHARS:,} a step takes" in json.loads(obs)["error"]
    assert not json.loads(gym.step({"tool": "get_book", "args": {"book_id": "b1"}})[0]).get("error")


def test_arguments_holding_too_many_values_are_refused_before_parsing(gym: ScenarioEnv) -> None:
    """Red team 8, F2: 4 MB of `[],[],...` (under the characters cap) cost one step 4 s of host CPU and 190 MB;
    the arguments' values are counted on the text first, as serve-mcp counts a message."""
    from envscaler_core.wire_values import MAX_MESSAGE_VALUES

    gym.reset(options={"scenario_index": 0})
    args = '{"book_id": "b1", "x": [' + ",".join(["[]"] * MAX_MESSAGE_VALUES) + "]}"
    obs, reward, terminated, _, info = gym.step({"id": "c0", "type": "function",
                                                 "function": {"name": "get_book", "arguments": args}})
    assert info["is_error"] and reward == 0.0 and not terminated
    error = json.loads(obs)["error"]
    assert f"over the {MAX_MESSAGE_VALUES:,} the host parses" in error and "\n" not in error
