"""Spec: BFCL tasks are reachable like synthesized envs: through the gym API (reward = BFCL's checker)
and through `envscaler serve-mcp bfcl:<task id>` driven by the official MCP client over stdio."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from envscaler_core.bfcl.calls import parse_call
from envscaler_core.bfcl.data import find_task
from envscaler_core.bfcl.reference import InProcessTask
from envscaler_core.gym import load_bfcl_set
from sandbox import SandboxPool


def _play(env: Any, task_id: str, drop_last: bool = False) -> tuple[float, dict[str, Any], list[str]]:
    obs, info = env.reset(options={"task_id": task_id})
    task, observations, reward = env.task, [], 0.0
    for turn, calls in enumerate(task.ground_truth):
        for text in calls[:-1] if drop_last and calls else calls:
            name, args = parse_call(text, task.involved_classes)
            obs, reward, terminated, truncated, info = env.step({"tool": name, "args": args})
            observations.append(obs)
        obs, reward, terminated, truncated, info = env.step({"done": True})
    assert terminated and not truncated
    return reward, info, observations


def test_gym_episode_replaying_the_ground_truth_earns_the_reward(bfcl_pool: SandboxPool) -> None:
    env = load_bfcl_set("base", bfcl_pool, limit=3)
    reward, info, observations = _play(env, "multi_turn_base_1")
    reference = InProcessTask(find_task("multi_turn_base_1"))
    assert observations == [reference.execute(c) for turn in reference.task.ground_truth for c in turn]
    reference.close()
    assert reward == 1.0 and info["verdict"]["valid"] is True


def test_gym_episode_missing_calls_earns_nothing(bfcl_pool: SandboxPool) -> None:
    env = load_bfcl_set("base", bfcl_pool, limit=1)
    reward, info, _ = _play(env, "multi_turn_base_0", drop_last=True)
    assert reward == 0.0 and info["verdict"]["error_type"].startswith("multi_turn:")


def test_a_gym_call_with_a_name_that_is_no_method_fails_alone_and_the_rest_of_the_step_runs(
        bfcl_pool: SandboxPool) -> None:
    """As in BFCL's executor (and `eval bfcl-mt`): the unknown name's call fails, the others run."""
    env = load_bfcl_set("base", bfcl_pool, limit=1)
    env.reset(options={"task_id": "multi_turn_base_0"})
    reference = InProcessTask(find_task("multi_turn_base_0"))
    for name, args in UNLISTED:
        observation, reward, terminated, truncated, info = env.step([{"tool": name, "args": args},
                                                                     {"tool": "pwd", "args": {}}])
        assert observation[0].startswith("Error during execution") and info["is_error"], name
        assert observation[1] == reference.execute("pwd()")
        assert (reward, terminated, truncated) == (0.0, False, False)
    reference.close()
    env.close()


def test_gym_steps_whose_calls_all_fail_count_towards_the_step_limit(bfcl_pool: SandboxPool) -> None:
    """10 steps of an unknown name and 10 of pwd(), then the gold step: the 21st step, force-quit as in BFCL."""
    env = load_bfcl_set("base", bfcl_pool, limit=1)
    env.reset(options={"task_index": 0})
    for action in [[{"tool": "open", "args": {}}]] * 10 + [[{"tool": "pwd", "args": {}}]] * 10:
        assert not env.step(action)[3]
    gold = _step_of(env.task, env.task.ground_truth[0])
    obs, reward, terminated, truncated, info = env.step(gold)
    assert (reward, terminated, truncated) == (0.0, False, True)
    assert info["verdict"]["error_type"] == "multi_turn:force_terminated"


def test_a_gym_step_bfcl_cannot_decode_ends_the_turn(bfcl_pool: SandboxPool) -> None:
    """BFCL's loop reads no calls from such a step and ends the turn; none of its calls runs."""
    env = load_bfcl_set("base", bfcl_pool, limit=1)
    for undecodable in ([{"tool": "pwd", "args": {}}, {"tool": "ls", "args": "not json"}],
                        {"id": "c", "type": "custom", "function": {"name": "pwd", "arguments": "{}"}}):
        env.reset(options={"task_id": "multi_turn_base_0"})
        obs, reward, terminated, truncated, info = env.step(undecodable)
        assert info["turn"] == 1 and info["is_error"] and info["decoding_error"].startswith("Error during decoding")
        assert obs == "\n".join(m["content"] for m in env.task.user_messages(1))
    env.close()


def test_gym_reset_refuses_an_option_it_does_not_know(bfcl_pool: SandboxPool) -> None:
    """A synthesized env's `scenario_index` once picked a random BFCL task without a word."""
    import pytest

    env = load_bfcl_set("base", bfcl_pool, limit=2)
    with pytest.raises(ValueError, match="scenario_index.*task_index or task_id"):
        env.reset(options={"scenario_index": 1})
    assert env.reset(options={"task_index": 1})[1] is not None
    env.close()


def test_gym_reset_refuses_a_task_index_that_is_not_an_integer(bfcl_pool: SandboxPool) -> None:
    """`True` is an int to Python; it was accepted as task 1."""
    import pytest

    env = load_bfcl_set("base", bfcl_pool, limit=2)
    for index in (True, False, 1.0, "1"):
        with pytest.raises(ValueError, match="task_index must be an integer"):
            env.reset(options={"task_index": index})
    env.close()


def test_gym_reset_refuses_a_task_index_and_a_task_id_together(bfcl_pool: SandboxPool) -> None:
    """The task_id was used and the task_index silently dropped."""
    import pytest

    env = load_bfcl_set("base", bfcl_pool, limit=6)
    with pytest.raises(ValueError, match="task_index or task_id, not both"):
        env.reset(options={"task_index": 0, "task_id": "multi_turn_base_5"})
    env.close()


def _step_of(task: Any, calls: list[str]) -> list[dict[str, Any]]:
    return [dict(zip(("tool", "args"), parse_call(text, task.involved_classes))) for text in calls]


def test_a_gym_action_carries_one_model_step_so_a_34_call_turn_earns_the_reward(bfcl_pool: SandboxPool) -> None:
    """long_context 38's first turn is one step of 34 calls in the gold play; with one call per action
    it was truncated after the 21st call (BFCL force-quits after 20 *steps*)."""
    env = load_bfcl_set("long_context", bfcl_pool)
    env.reset(options={"task_id": "multi_turn_long_context_38"})
    task, observations = env.task, []
    assert len(task.ground_truth[0]) > 20
    for calls in task.ground_truth:
        if calls:
            obs, reward, terminated, truncated, info = env.step(_step_of(task, calls))
            assert isinstance(obs, list) and len(obs) == len(calls) and not truncated
            observations.extend(obs)
        obs, reward, terminated, truncated, info = env.step({"done": True})
    reference = InProcessTask(task)
    assert observations == reference.execute_step([c for calls in task.ground_truth for c in calls])
    reference.close()
    assert (reward, terminated, truncated, info["verdict"]["valid"]) == (1.0, True, False, True)


def test_the_gym_counts_steps_not_calls_towards_bfcls_step_limit(bfcl_pool: SandboxPool) -> None:
    env = load_bfcl_set("base", bfcl_pool, limit=1)
    env.reset(options={"task_index": 0})
    for _ in range(20):  # 20 steps of 3 calls: 60 calls, within the limit
        obs, reward, terminated, truncated, info = env.step([{"tool": "pwd", "args": {}}] * 3)
        assert len(obs) == 3 and not truncated
    obs, reward, terminated, truncated, info = env.step({"tool": "pwd", "args": {}})  # the 21st step
    assert (reward, terminated, truncated) == (0.0, False, True)
    assert info["verdict"]["error_type"] == "multi_turn:force_terminated"


def test_serve_mcp_refuses_run_and_scenario_options_for_a_bfcl_task(tmp_path: Path) -> None:
    import subprocess

    envscaler = Path(sys.executable).with_name("envscaler")
    out = subprocess.run([str(envscaler), "serve-mcp", "bfcl:multi_turn_base_0", "--scenario", "abc"],
                         capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert out.returncode == 2 and "leave them out" in out.stderr, out.stderr


def test_gym_tools_gain_the_held_out_function_at_its_turn(bfcl_pool: SandboxPool) -> None:
    env = load_bfcl_set("miss_func", bfcl_pool, limit=1)
    task = find_task("multi_turn_miss_func_0")
    [(held_turn, [held])] = task.held_out.items()
    _, info = env.reset(options={"task_id": task.id})
    names = lambda i: {t["function"]["name"] for t in i["tools"]}  # noqa: E731
    assert held not in names(info)
    for _ in range(held_turn):
        obs, _, _, _, info = env.step({"done": True})
    assert held in names(info) and obs.startswith("I have updated some more functions")
    env.close()


UNLISTED = [("open", {"file": "/usr/lib/os-release"}), ("__import__", {"name": "os"}), ("globals", {}),
            ("post_tweet_", {})]


def test_a_bfcl_task_over_mcp_answers_like_the_package() -> None:
    params = StdioServerParameters(command=sys.executable, cwd=str(Path(__file__).parents[2]),
                                   args=["-m", "envscaler.cli", "serve-mcp", "bfcl:multi_turn_base_0"])

    async def main() -> Any:
        async with Client(params, read_timeout_seconds=60) as client:
            listed = await client.list_tools()
            made = await client.call_tool("mkdir", {"dir_name": "temp"})
            listing = await client.call_tool("ls", {})
            bad = await client.call_tool("cd", {"folder": "no_such_dir"})
            state = await client.call_tool("envscaler-get-state", {})
            unlisted = [await client.call_tool(name, args) for name, args in UNLISTED]
            return listed, made, listing, bad, state, unlisted

    listed, made, listing, bad, state, unlisted = anyio.run(main)
    names = {t.name for t in listed.tools}
    assert {"ls", "mkdir", "post_tweet", "envscaler-get-state"} <= names
    reference = InProcessTask(find_task("multi_turn_base_0"))
    assert made.content[0].text == reference.execute("mkdir(dir_name='temp')")
    assert listing.content[0].text == reference.execute("ls()")
    assert bad.content[0].text == reference.execute("cd(folder='no_such_dir')")
    reference.close()
    assert json.loads(state.content[0].text)["executed"][0] == "mkdir(dir_name='temp')"
    for (name, _), result in zip(UNLISTED, unlisted, strict=True):  # BFCL's loop would eval these names
        assert result.is_error and "not one of this task's functions" in result.content[0].text, name
