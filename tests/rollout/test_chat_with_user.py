"""Spec: in a rollout a `chat_with_user` tool call is the message to the user, as in EnvScaler's runtime:
it ends a non-conversational episode there (the calls after it in the same message are answered as not
run), and a call without `content` is a bad call the episode goes on after (interop re-check, F2)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from envscaler_core.config import Settings
from envscaler_core.models.scenario import ToolCall
from envscaler_core.rollout import ScriptedAgent, run_rollout
from tests.rollout.test_scripted import assert_valid_openai_protocol
from tests.scenarios.helpers import PLAN, library_env, scenario


def _roll(runtime: Any, plan: list[ToolCall], per_message: int = 1) -> Any:
    settings = Settings.model_validate({"rollout": {"mode": "non_conversational"}})
    return asyncio.run(run_rollout(library_env(), scenario(), runtime, None, settings,
                                   agent=ScriptedAgent(plan, per_message=per_message)))


def test_a_message_to_the_user_ends_the_episode_before_the_solution_runs(runtime: Any) -> None:
    traj = _roll(runtime, [ToolCall(tool="chat_with_user", args={"content": "Task Completed"}), *PLAN])
    assert traj.termination == "agent_done" and traj.steps == 1 and traj.reward == 0.0
    assert json.loads(traj.messages[3]["content"]) == {"type": "user", "content": "Task finished"}


def test_the_calls_after_it_in_one_message_are_answered_as_not_run(runtime: Any) -> None:
    traj = _roll(runtime, [ToolCall(tool="chat_with_user", args={"content": "bye"}), *PLAN], per_message=3)
    assert traj.reward == 0.0 and traj.final_state == traj.initial_state
    assert all("not run" in json.loads(m["content"])["error"] for m in traj.messages[4:])
    assert_valid_openai_protocol(traj.messages)


def test_a_message_without_content_is_a_bad_call_and_the_episode_goes_on(runtime: Any) -> None:
    traj = _roll(runtime, [ToolCall(tool="chat_with_user", args={}), *PLAN])
    assert traj.tool_errors == 1 and traj.reward == 1.0
    assert "content" in json.loads(traj.messages[3]["content"])["error"]
