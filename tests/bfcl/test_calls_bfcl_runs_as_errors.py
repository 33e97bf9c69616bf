"""Spec: a call BFCL runs as an error (a keyword as a name, a tool named `None`, an argument nested
70 deep or holding a lone surrogate, a local name of the package's executor) is one failed call, as
in BFCL: the rest of its step runs and the turn goes on, and the observations and the verdict are the
package's own (its executor and checker, in this process, are the reference)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from envscaler_core.bfcl.data import find_task
from envscaler_core.bfcl.executor import SandboxedTask
from envscaler_core.bfcl.play import GoldAgent, play_task
from envscaler_core.bfcl.reference import InProcessTask, score_in_process
from envscaler_core.rollout.agents import AgentTurn
from sandbox import SandboxPool


class GoldPlusOne:
    """The gold agent, with one more call in front of the first step of turn 0."""

    def __init__(self, task: Any, name: str, arguments: str) -> None:
        self.gold, self.extra = GoldAgent(task), {"id": "extra", "type": "function",
                                                   "function": {"name": name, "arguments": arguments}}

    async def step(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> AgentTurn:
        turn = await self.gold.step(messages, tools)
        calls = turn.message.get("tool_calls")
        if calls and sum(m["role"] == "user" for m in messages) == 1:
            return AgentTurn(message={**turn.message, "tool_calls": [self.extra, *calls]})
        return turn


def _both(task_id: str, name: str, arguments: str, pool: SandboxPool) -> tuple[Any, Any, Any, Any]:
    task = find_task(task_id)
    with InProcessTask(task) as reference:
        expected = asyncio.run(play_task(task, GoldPlusOne(task, name, arguments), reference))
    with SandboxedTask(pool, task) as sandboxed:
        played = asyncio.run(play_task(task, GoldPlusOne(task, name, arguments), sandboxed))
        verdict = sandboxed.score(played.decoded)
    return played, expected, verdict, score_in_process(task, expected.decoded)


NESTED_70 = json.dumps({"a": json.loads("[" * 70 + "]" * 70)})


@pytest.mark.parametrize(("task_id", "name", "arguments", "observation"), [
    ("multi_turn_base_2", "ls", '{"class": 1}', "Error during execution: invalid syntax (<string>, line 1)"),
    ("multi_turn_base_4", "pwd", '{"from": "x"}', "Error during execution: invalid syntax (<string>, line 1)"),
    ("multi_turn_base_5", "None", "{}", "Error during execution: 'NoneType' object is not callable"),
    ("multi_turn_base_6", "lambda", "{}", "Error during execution: invalid syntax (<string>, line 1)"),
    ("multi_turn_base_7", "True", "{}", "Error during execution: 'bool' object is not callable"),
    ("multi_turn_base_2", "ls", '{"a": "\\ud800"}', None),
    ("multi_turn_base_4", "ls", NESTED_70, None),
    ("multi_turn_base_2", "exit", '{"class": 1}', "Error during execution: Function call exit is not allowed."),
    ("multi_turn_base_2", "ls", '{"x": NaN}', "Error during execution: name 'nan' is not defined"),
    ("multi_turn_base_2", "long_context", "{}", "Error during execution: 'bool' object is not callable"),
    ("multi_turn_base_2", "class_instance", "{}", None),
], ids=["keyword-key", "keyword-key-2", "None", "lambda", "True", "lone-surrogate", "nested-70", "not-allowed",
        "nan", "executor-local", "executor-instance"])
def test_a_call_bfcl_runs_as_an_error_fails_alone_and_the_step_goes_on(
        bfcl_pool: SandboxPool, task_id: str, name: str, arguments: str, observation: str | None) -> None:
    played, expected, verdict, expected_verdict = _both(task_id, name, arguments, bfcl_pool)
    assert played.observations == expected.observations
    if observation is not None:
        assert played.observations[0] == observation
    assert played.decoded == expected.decoded and len(played.decoded[0][0]) > 1  # the gold calls ran too
    assert (verdict.valid, verdict.error_type) == (expected_verdict.valid, expected_verdict.error_type)
    assert verdict.valid  # an extra failed call changes no state: the gold play stays valid, as in BFCL


@pytest.mark.parametrize("task_id", ["multi_turn_base_107", "multi_turn_base_115"])
def test_a_tool_named_method_runs_what_bfcls_executor_calls_method(bfcl_pool: SandboxPool, task_id: str) -> None:
    """BFCL's `eval` sees its executor's loop variable `method`: the last method of the last involved
    class (TradingBot's `withdraw_funds` here), which changes the state and so the verdict."""
    played, expected, verdict, expected_verdict = _both(task_id, "method", '{"amount": 100.0}', bfcl_pool)
    assert played.observations == expected.observations
    assert "Withdrawal successful" in played.observations[0]
    assert (verdict.valid, verdict.error_type) == (False, "multi_turn:instance_state_mismatch")
    assert (expected_verdict.valid, expected_verdict.error_type) == (verdict.valid, verdict.error_type)


class GoldWithSpacedNames:
    """The gold agent, each call's name followed by one whitespace character (newline, return, form
    feed, tab in turn), as a model might send `"mkdir\\n"`."""

    SPACES = ("\n", "\r", "\f", "\t")

    def __init__(self, task: Any) -> None:
        self.gold = GoldAgent(task)

    async def step(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> AgentTurn:
        turn = await self.gold.step(messages, tools)
        calls = [{**call, "function": {**call["function"], "name": call["function"]["name"] + self.SPACES[i % 4]}}
                 for i, call in enumerate(turn.message.get("tool_calls") or [])]
        return AgentTurn(message={**turn.message, "tool_calls": calls}) if calls else turn


@pytest.mark.parametrize("task_id", ["multi_turn_base_0", "multi_turn_base_3"])
def test_whitespace_between_a_name_and_its_parenthesis_runs_the_call_as_in_bfcl(
        bfcl_pool: SandboxPool, task_id: str) -> None:
    """BFCL's `_process_method_calls` swallows the whitespace before `(`, so `mkdir\\n(...)` runs."""
    task = find_task(task_id)
    with InProcessTask(task) as reference:
        expected = asyncio.run(play_task(task, GoldWithSpacedNames(task), reference))
    with SandboxedTask(bfcl_pool, task) as sandboxed:
        played = asyncio.run(play_task(task, GoldWithSpacedNames(task), sandboxed))
        verdict = sandboxed.score(played.decoded)
    assert "\n(" in played.decoded[0][0][0] or "\n(" in str(played.decoded)
    assert played.observations == expected.observations
    assert not any("refused" in text for text in played.observations)
    assert verdict.valid and score_in_process(task, expected.decoded).valid


@pytest.mark.parametrize("calls", [
    ["func_call_result()", "pwd()", "func_call_result()"],
    ["cd(folder='nowhere')", "func_call_result()", "ls()", "func_call_result(a=1)"],
], ids=["before-and-after-a-call", "after-a-call-the-api-refused"])
def test_the_executors_func_call_result_exists_once_a_call_of_the_step_has_run(
        bfcl_pool: SandboxPool, calls: list[str]) -> None:
    """BFCL's executor keeps the last result's text in its local `func_call_result`, which its `eval`
    sees: calling it is "not defined" before any call of the step ran, "'str' object is not callable"
    after (the package's executor, given the whole step as BFCL's loop gives it, is the reference)."""
    task = find_task("multi_turn_base_0")
    with InProcessTask(task) as reference:
        expected = reference.execute_step(calls)
    with SandboxedTask(bfcl_pool, task) as sandboxed:
        assert sandboxed.execute_step(calls) == expected
    assert expected[0] != expected[-1] or "cd" in calls[0]
    assert "'str' object is not callable" in expected[-1]


def test_method_names_in_string_arguments_are_rewritten_with_the_models_name(bfcl_pool: SandboxPool) -> None:
    """BFCL's `_process_method_calls` also rewrites `ls(` inside a string argument, with the instance
    name, which holds the model's name (`/`, `-`, `.` as `_`): the text written is the one BFCL writes
    for that model, not for a fixed name."""
    from bfcl_eval.eval_checker.multi_turn_eval import multi_turn_utils

    task = find_task("multi_turn_base_0")
    calls = ["touch(file_name='note.txt')", "echo(content='run ls() then sort (x)', file_name='note.txt')",
             "cat(file_name='note.txt')"]
    try:
        expected, _ = multi_turn_utils.execute_multi_turn_func_call(
            calls, task.initial_config, task.involved_classes, "scripted_x_1_5", task.id)
    finally:
        for name in [n for n in vars(multi_turn_utils) if n.startswith("scripted_x_1_5_")]:
            delattr(multi_turn_utils, name)
    assert "scripted_x_1_5_multi_turn_base_0_GorillaFileSystem_instance.ls()" in expected[2]
    with SandboxedTask(bfcl_pool, task, model_name="scripted/x-1.5") as sandboxed:
        assert sandboxed.execute_step(calls) == expected
