"""Spec: the rollout loop with scripted agents (no LLM): rewards, message protocol, bad calls, limits."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from envscaler_core.config import Settings
from envscaler_core.llm.errors import LLMOutputInvalid, LLMUnavailableError
from envscaler_core.models.scenario import ToolCall
from envscaler_core.rollout import AgentTurn, ScriptedAgent, do_nothing_agent, replay_agent, run_rollout
from envscaler_core.scenarios import score_checks
from tests.scenarios.helpers import LENT_B1, PLAN, STATE, VACUOUS, forging_library_env, library_env, scenario


def roll(runtime, agent, sc=None, **rollout: Any):
    settings = Settings.model_validate({"rollout": rollout})
    return asyncio.run(run_rollout(library_env(), sc or scenario(), runtime, None, settings, agent=agent))


def assert_valid_openai_protocol(messages: list[dict[str, Any]]) -> None:
    """Every assistant tool_call is answered by exactly one tool message with its id, before anything else."""
    i = 0
    while i < len(messages):
        m = messages[i]
        ids = [c["id"] for c in m.get("tool_calls") or []]
        answered = [x["tool_call_id"] for x in messages[i + 1:i + 1 + len(ids)] if x["role"] == "tool"]
        assert answered == ids, f"message {i}: tool calls {ids} answered by {answered}"
        i += 1 + len(ids)


def test_replaying_the_reference_solution_earns_full_reward(runtime):
    traj = roll(runtime, replay_agent(PLAN))
    assert traj.reward == 1.0 and traj.all_passed
    assert traj.termination == "agent_done" and traj.tool_errors == 0
    assert traj.final_state["books"]["b2"]["status"] == "lent" and traj.initial_state == STATE
    assert_valid_openai_protocol(traj.messages)


def test_doing_nothing_earns_the_initial_state_score(runtime):
    sc = scenario([LENT_B1, VACUOUS])
    initial_reward, _, _ = score_checks(library_env(), sc, STATE, runtime)
    traj = roll(runtime, do_nothing_agent(), sc)
    assert traj.reward == initial_reward == 0.5
    assert [r.passed for r in traj.check_results] == [False, True]


def test_doing_nothing_in_a_verified_scenario_earns_zero(runtime):
    traj = roll(runtime, do_nothing_agent())
    assert traj.reward == 0.0 and not traj.all_passed and traj.steps == 1


def test_hallucinated_tool_becomes_an_observation_and_the_episode_continues(runtime):
    plan = [ToolCall(tool="teleport_book", args={"book_id": "b1"}), *PLAN]
    traj = roll(runtime, ScriptedAgent(plan))
    first_obs = json.loads(traj.messages[3]["content"])
    assert traj.messages[3]["role"] == "tool" and "error" in first_obs
    assert traj.tool_errors == 1 and traj.reward == 1.0
    assert_valid_openai_protocol(traj.messages)


class RawAgent:
    """Emits one hand-written assistant message (e.g. malformed arguments), then finishes."""

    name = "raw"

    def __init__(self, message: dict[str, Any]) -> None:
        self.message, self.sent = message, False

    async def step(self, messages, tools) -> AgentTurn:
        if self.sent:
            return AgentTurn(message={"role": "assistant", "content": "Task Completed"})
        self.sent = True
        return AgentTurn(message=self.message)


def test_malformed_arguments_and_missing_ids_become_observations(runtime):
    msg = {"role": "assistant", "content": None, "tool_calls": [
        {"type": "function", "function": {"name": "get_book", "arguments": "{not json"}},
        {"type": "function", "function": {"name": "list_books", "arguments": ""}},
    ]}
    traj = roll(runtime, RawAgent(msg))
    assert traj.tool_errors == 1
    assert "not valid JSON" in json.loads(traj.messages[3]["content"])["error"]
    assert len(json.loads(traj.messages[4]["content"])["data"]) == 3
    assert_valid_openai_protocol(traj.messages)


def test_several_tool_calls_in_one_message_run_in_order(runtime):
    plan = [ToolCall(tool="lend_book", args={"book_id": "b2", "member": "Ana"}),
            ToolCall(tool="get_book", args={"book_id": "b2"})]
    traj = roll(runtime, ScriptedAgent(plan, per_message=2))
    assert len(traj.messages[2]["tool_calls"]) == 2
    assert json.loads(traj.messages[4]["content"])["data"]["status"] == "lent"
    assert traj.steps == 2


def test_max_steps_is_honoured_and_the_final_state_still_scored(runtime):
    traj = roll(runtime, replay_agent(PLAN), max_steps=1)
    assert traj.termination == "max_steps" and traj.steps == 1
    assert traj.reward == 0.5 and [r.passed for r in traj.check_results] == [True, False]


class FailingAgent:
    """Acts once, then its model fails with `error`."""

    name = "flaky"

    def __init__(self, error: Exception) -> None:
        self.inner = replay_agent(PLAN[:1])
        self.turns = 0
        self.error = error

    async def step(self, messages, tools) -> AgentTurn:
        self.turns += 1
        if self.turns > 1:
            raise self.error
        return await self.inner.step(messages, tools)


def test_unusable_model_answer_ends_as_error_and_is_still_scored(runtime):
    traj = roll(runtime, FailingAgent(LLMOutputInvalid("agent reply", reason="not JSON")))
    assert traj.termination == "error" and traj.steps == 1
    assert traj.reward == 0.5  # the one call it made still counts


def test_unreachable_model_propagates_so_the_episode_is_replayed_on_resume(runtime):
    with pytest.raises(LLMUnavailableError):
        roll(runtime, FailingAgent(LLMUnavailableError("endpoint down")))


def test_an_episode_whose_replies_were_forged_ends_in_an_error_with_no_reward(runtime):
    """Red team sandbox-4 F7: every lend is refused but reported (forged) as done, with a state to match;
    before, the rollout scored that forged state 1.0. The breach is found when the final state is read."""
    traj = asyncio.run(run_rollout(forging_library_env(), scenario(), runtime, None, Settings(),
                                   agent=replay_agent(PLAN)))
    assert traj.termination == "error" and traj.reward == 0.0 and not traj.all_passed
    assert traj.check_results == [] and traj.final_state == {}
    assert "forged replies" in traj.error and "did not ask for" in traj.error
