"""Spec: conversational mode routes the agent's text to a simulated user and ends on its stop marker.

`ScriptedUser` stands in for the user-simulator model at the gateway's `chat` seam (a deterministic
user we control); the LLM user over the real mock server is covered in test_llm_agent.py.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from envscaler_core.config import Settings
from envscaler_core.prompts.agent import STOP_MARKER, USER_SIMULATOR
from envscaler_core.rollout import AgentTurn, replay_agent, run_rollout
from tests.scenarios.helpers import PLAN, library_env, scenario


@dataclass
class Reply:
    message: dict[str, Any]
    usage: dict[str, int] = field(default_factory=lambda: {"prompt_tokens": 10, "completion_tokens": 2})


class ScriptedUser:
    def __init__(self, lines: list[str]) -> None:
        self.lines, self.seen = list(lines), []

    async def chat(self, messages, prompt, stage, tools=None, sample=0):
        assert prompt is USER_SIMULATOR and stage == "user_sim" and tools is None
        self.seen.append([dict(m) for m in messages])
        return Reply({"role": "assistant", "content": self.lines.pop(0)})


def conv(runtime, user: ScriptedUser, agent, max_steps: int = 10):
    settings = Settings.model_validate({"rollout": {"mode": "conversational", "max_steps": max_steps}})
    return asyncio.run(run_rollout(library_env(), scenario(), runtime, user, settings, agent=agent))


def test_user_opens_agent_acts_and_user_stop_ends_with_full_reward(runtime):
    user = ScriptedUser(["Please lend Dune and Emma to Ana.", f"Thanks! {STOP_MARKER}"])
    traj = conv(runtime, user, replay_agent(PLAN))
    assert traj.mode == "conversational" and traj.termination == "user_stop"
    assert traj.messages[1] == {"role": "user", "content": "Please lend Dune and Emma to Ana."}
    assert traj.reward == 1.0 and traj.usage.prompt_tokens == 20
    assert scenario().task in user.seen[0][0]["content"]  # the user, not the agent, holds the task
    assert user.seen[1][-1] == {"role": "user", "content": "Task Completed"}  # roles flipped for the user


def test_user_replies_come_back_as_user_messages_until_stop(runtime):
    user = ScriptedUser(["Hi, I need help.", "Lend Dune and Emma to Ana.", STOP_MARKER])

    class AskFirst:
        name = "ask-first"

        def __init__(self):
            self.inner, self.asked = replay_agent(PLAN), False

        async def step(self, messages, tools):
            if not self.asked:
                self.asked = True
                return AgentTurn(message={"role": "assistant", "content": "What should I do?"})
            return await self.inner.step(messages, tools)

    traj = conv(runtime, user, AskFirst())
    assert traj.messages[3] == {"role": "user", "content": "Lend Dune and Emma to Ana."}
    assert traj.termination == "user_stop" and traj.reward == 1.0
    assert all(STOP_MARKER not in str(m.get("content")) for m in traj.messages)
