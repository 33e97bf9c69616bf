"""Spec: a force-quit is scored as BFCL scores it. BFCL's handler appends the turn it force-quits in
before it stops, and its eval_runner rejects a task only when the turn counts differ: a force-quit in
the last turn has every turn, so `multi_turn_checker` decides (an outside check: BFCL valid 4 of 4,
we 0 of 4 with the self-contradicting "(2) does not match (2)"); one in an earlier turn is
force-terminated with BFCL's message. Same rule in the evaluation and the gym. Real sandbox episodes."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from envscaler_core.bfcl.calls import parse_call
from envscaler_core.bfcl.data import MAX_STEPS_PER_TURN, BFCLTask, find_task
from envscaler_core.bfcl.evaluate import EvalRequest, evaluate_task
from envscaler_core.bfcl.play import current_turn, steps_this_turn
from envscaler_core.gym import load_bfcl_set
from envscaler_core.rollout.agents import AgentTurn
from sandbox import SandboxPool

TASK = "multi_turn_base_3"  # two turns


def _call(i: int, text: str, task: BFCLTask) -> dict[str, Any]:
    name, kwargs = parse_call(text, task.involved_classes)
    return {"id": f"c{i}", "type": "function", "function": {"name": name, "arguments": json.dumps(kwargs)}}


class LoopsIn:
    """The ground truth in one step each turn, then (in `turn`) `pwd()` forever; elsewhere a text reply."""

    def __init__(self, task: BFCLTask, turn: int) -> None:
        self.task, self.turn = task, turn

    async def step(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> AgentTurn:
        turn = current_turn(self.task, messages)
        if not steps_this_turn(messages):
            calls = [_call(i, text, self.task) for i, text in enumerate(self.task.ground_truth[turn])]
            return AgentTurn(message={"role": "assistant", "content": None, "tool_calls": calls})
        if turn == self.turn:
            return AgentTurn(message={"role": "assistant", "content": None, "tool_calls": [_call(0, "pwd()", self.task)]})
        return AgentTurn(message={"role": "assistant", "content": "Done."})


def _evaluate(bfcl_pool: SandboxPool, turn: int) -> Any:
    task = find_task(TASK)
    return asyncio.run(evaluate_task(task, EvalRequest(subsets=["base"]), bfcl_pool, agent=LoopsIn(task, turn)))


def test_a_force_quit_in_the_last_turn_is_scored_by_the_checker(bfcl_pool: SandboxPool) -> None:
    result = _evaluate(bfcl_pool, turn=1)
    assert result.force_quit and result.turns == 2
    assert result.steps == 1 + 1 + MAX_STEPS_PER_TURN + 1  # turn 0: calls, text; turn 1: 21 tool steps
    assert (result.valid, result.error_type) == (True, None)


def test_a_force_quit_before_the_last_turn_is_force_terminated_with_bfcls_message(bfcl_pool: SandboxPool) -> None:
    result = _evaluate(bfcl_pool, turn=0)
    assert result.force_quit and result.turns == 1 and not result.valid
    assert result.error_type == "multi_turn:force_terminated"
    assert result.error_message == ("Model was force-terminated during inference phase. The length of the model "
                                    "result turns (1) does not match the length of the ground truth turns (2).")


def _gym_loop(bfcl_pool: SandboxPool, loop_turn: int) -> tuple[float, bool, bool, dict[str, Any]]:
    env = load_bfcl_set("base", bfcl_pool, limit=4)
    env.reset(options={"task_id": TASK})
    task = env.task
    try:
        for turn, calls in enumerate(task.ground_truth):
            env.step([dict(zip(("tool", "args"), parse_call(text, task.involved_classes))) for text in calls])
            if turn == loop_turn:
                for _ in range(MAX_STEPS_PER_TURN):
                    obs, reward, terminated, truncated, info = env.step({"tool": "pwd", "args": {}})
                    if truncated:
                        return reward, terminated, truncated, info
            env.step({"done": True})
    finally:
        env.close()
    raise AssertionError("the episode was never truncated")


def test_a_gym_episode_truncated_in_its_last_turn_earns_the_checkers_reward(bfcl_pool: SandboxPool) -> None:
    reward, terminated, truncated, info = _gym_loop(bfcl_pool, loop_turn=1)
    assert (reward, terminated, truncated) == (1.0, False, True)
    assert info["verdict"]["valid"] is True


def test_a_gym_episode_truncated_before_its_last_turn_is_force_terminated(bfcl_pool: SandboxPool) -> None:
    reward, terminated, truncated, info = _gym_loop(bfcl_pool, loop_turn=0)
    assert (reward, terminated, truncated) == (0.0, False, True)
    assert info["verdict"]["error_type"] == "multi_turn:force_terminated"
    assert "model result turns (1) does not match the length of the ground truth turns (2)" in \
        info["verdict"]["error_message"]
