"""Spec: a class state or a verdict's details nested deeper than the sandbox's wire allows (64 levels)
is still played and scored as BFCL plays and scores it: a directory 30 levels down is created (not
refused as "unserializable"), a tweet whose tags nest 60 deep gets the package's verdict, and the
task's result is stored, so the evaluation goes on (it stopped, and its resume failed the same way).
The reference is the package's own executor and checker in this process."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from envscaler_core.bfcl.data import find_task
from envscaler_core.bfcl.evaluate import EvalRequest, evaluate_task
from envscaler_core.bfcl.executor import SandboxedTask
from envscaler_core.bfcl.play import GoldAgent, play_task
from envscaler_core.bfcl.reference import InProcessTask, score_in_process
from envscaler_core.models import BFCLTaskResult
from envscaler_core.rollout.agents import AgentTurn
from envscaler_core.store.store import Store
from sandbox import SandboxPool


class GoldPlus:
    """The gold agent, with `extra` calls ({"name", "arguments"}) in front of the first step of turn 0."""

    def __init__(self, task: Any, extra: list[tuple[str, dict[str, Any]]]) -> None:
        self.gold = GoldAgent(task)
        self.extra = [{"id": f"extra_{i}", "type": "function", "function": {"name": n, "arguments": json.dumps(a)}}
                      for i, (n, a) in enumerate(extra)]

    async def step(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> AgentTurn:
        turn = await self.gold.step(messages, tools)
        calls = turn.message.get("tool_calls")
        if calls and sum(m["role"] == "user" for m in messages) == 1:
            return AgentTurn(message={**turn.message, "tool_calls": [*self.extra, *calls]})
        return turn


def _reference(task_id: str, extra: list[tuple[str, dict[str, Any]]]) -> tuple[Any, Any]:
    task = find_task(task_id)
    with InProcessTask(task) as reference:
        played = asyncio.run(play_task(task, GoldPlus(task, extra), reference))
    return played, score_in_process(task, played.decoded)


def test_a_directory_nested_deeper_than_the_wire_is_created_as_in_bfcl(bfcl_pool: SandboxPool) -> None:
    task = find_task("multi_turn_base_1")
    calls = [call for i in range(30) for call in (f"mkdir(dir_name='d{i}')", f"cd(folder='d{i}')")] + ["pwd()"]
    with InProcessTask(task) as reference:
        expected = reference.execute_step(calls)
    with SandboxedTask(bfcl_pool, task) as sandboxed:
        observations = sandboxed.execute_step(calls)
        assert sandboxed.execute("ls()") == '{"current_directory_content": []}'
    assert observations == expected
    assert "d29" in observations[-1] and not any("unserializable" in text for text in observations)


def test_a_state_deeper_than_the_wire_gets_the_packages_verdict_and_is_stored(
        bfcl_pool: SandboxPool, tmp_path: Path) -> None:
    task = find_task("multi_turn_base_4")
    tags: Any = ["#deep"]
    for _ in range(59):
        tags = [tags]
    extra = [("post_tweet", {"content": "hello", "tags": tags})]
    _, expected = _reference(task.id, extra)
    assert (expected.valid, expected.error_type) == (False, "multi_turn:instance_state_mismatch")

    request = EvalRequest(subsets=["base"], limit=5, agent="llm", model="deep")
    result = asyncio.run(evaluate_task(task, request, bfcl_pool, agent=GoldPlus(task, extra)))
    assert (result.valid, result.error_type) == (expected.valid, expected.error_type)
    with Store.from_url(f"duckdb:///{tmp_path / 'store.duckdb'}") as store:
        store.upsert([result], "deep-run")
        [stored] = store.query(BFCLTaskResult, run_id="deep-run")
    assert (stored.valid, stored.error_type) == (expected.valid, expected.error_type)
