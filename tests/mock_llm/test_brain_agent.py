"""Spec: the chat roles. The agent maps a library task (or the simulated user's words) to its plan and
emits one tool call per turn, reading progress from the messages; the simulated user reveals the goal
and stops once the agent reports completion. Tool results come from the real sandbox."""

from __future__ import annotations

import json
from typing import Any

import pytest

from mock_llm import library
from mock_llm.protocol import MockCannotAnswer
from envscaler_core.prompts.agent import (
    AGENT_CONVERSATIONAL, AGENT_NON_CONVERSATIONAL, DONE_MARKER, STOP_MARKER, USER_SIMULATOR,
)
from tests.mock_llm.helpers import chat, open_env, tool_dicts

DOMAINS = library.domains()


def _play(request: pytest.FixtureRequest, domain: library.Domain, index: int) -> tuple[list[dict[str, Any]], str]:
    """Drive agent.solve until it stops calling tools; returns (calls made, final text)."""
    sc = domain.scenarios[index]
    tools = tool_dicts(domain)
    messages: list[dict[str, Any]] = [{"role": "system", "content": "solve"}, {"role": "user", "content": sc.task}]
    env = open_env(request, domain, sc.initial_state)
    calls = []
    try:
        for turn in range(20):
            reply = chat(AGENT_NON_CONVERSATIONAL, messages, tools)
            if not reply.tool_calls:
                return calls, reply.content or ""
            assert len(reply.tool_calls) == 1
            call = reply.tool_calls[0]
            calls.append({"tool": call.name, "args": call.arguments})
            result, _ = env.call(call.name, call.arguments)
            messages.append({"role": "assistant", "content": None, "tool_calls": [
                {"id": f"c{turn}", "type": "function",
                 "function": {"name": call.name, "arguments": json.dumps(call.arguments)}}]})
            messages.append({"role": "tool", "tool_call_id": f"c{turn}", "content": json.dumps(result)})
    finally:
        env.close()
    raise AssertionError("the agent never finished")


@pytest.mark.parametrize("domain", DOMAINS, ids=[d.name for d in DOMAINS])
def test_agent_plays_the_reference_plan_then_reports_done(request, domain):
    calls, text = _play(request, domain, 0)
    assert calls == domain.scenarios[0].reference_solution
    assert DONE_MARKER in text


def test_agent_without_a_known_task_answers_done_without_calls():
    domain = DOMAINS[0]
    reply = chat(AGENT_NON_CONVERSATIONAL, [{"role": "system", "content": "s"},
                                            {"role": "user", "content": "Plant a tree in the garden."}],
                 tool_dicts(domain))
    assert not reply.tool_calls and DONE_MARKER in (reply.content or "")


def test_agent_ignores_a_task_whose_tools_are_not_offered():
    sc = DOMAINS[0].scenarios[0]
    reply = chat(AGENT_NON_CONVERSATIONAL, [{"role": "user", "content": sc.task}], tool_dicts(DOMAINS[1]))
    assert not reply.tool_calls


def _sim(history: list[dict[str, Any]], task: str) -> str:
    system = {"role": "system", "content": USER_SIMULATOR.system.format(task=task)}
    return chat(USER_SIMULATOR, [system, *history], None).content or ""


def test_user_simulator_reveals_the_goal_first():
    task = DOMAINS[0].scenarios[0].task
    assert task in _sim([{"role": "user", "content": "Hi! How can I help you today?"}], task)


def test_user_simulator_stops_when_the_agent_reports_completion():
    task = DOMAINS[0].scenarios[0].task
    history = [{"role": "user", "content": "Hi!"}, {"role": "assistant", "content": f"Please: {task}"},
               {"role": "user", "content": f"{DONE_MARKER}. Anything else?"}]
    assert _sim(history, task) == STOP_MARKER


def test_user_simulator_restates_the_goal_when_asked():
    task = DOMAINS[0].scenarios[0].task
    history = [{"role": "user", "content": "Hi!"}, {"role": "assistant", "content": "Hello"},
               {"role": "user", "content": "Which patient do you mean?"}]
    assert task in _sim(history, task)


def test_user_simulator_needs_a_goal_in_its_system_message():
    with pytest.raises(MockCannotAnswer, match="no goal"):
        chat(USER_SIMULATOR, [{"role": "system", "content": "be nice"}], None)


def test_conversational_agent_acts_on_the_users_words():
    domain = DOMAINS[0]
    sc = domain.scenarios[0]
    messages = [{"role": "system", "content": "converse"},
                {"role": "user", "content": f"Hi, I need some help, please. {sc.task}"}]
    reply = chat(AGENT_CONVERSATIONAL, messages, tool_dicts(domain))
    assert [(c.name, c.arguments) for c in reply.tool_calls] == [
        (sc.reference_solution[0]["tool"], sc.reference_solution[0]["args"])]
