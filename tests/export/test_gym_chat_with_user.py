"""Spec: in the gym a `chat_with_user` call is the message to the user, as in EnvScaler's runtime: with
`content` it ends the episode there, scored on the state at that point; without `content` (or with content
EnvScaler's runtime crashes on) it is a bad action and the episode goes on (interop re-check, F2: it was an
"unknown tool", the episode went on, and a later call earned a reward EnvScaler's runtime never pays)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from envscaler_core.gym import ScenarioEnv
from tests.scenarios.helpers import PLAN


def _chat(arguments: str) -> dict[str, Any]:
    return {"id": "c1", "type": "function", "function": {"name": "chat_with_user", "arguments": arguments}}


def test_a_message_to_the_user_ends_the_episode_scored_on_the_state_so_far(gym: ScenarioEnv) -> None:
    obs, reward, terminated, truncated, info = gym.step(_chat('{"content": "Task Completed"}'))
    assert terminated and not truncated and reward == 0.0 and json.loads(obs)["done"] is True
    assert info["all_passed"] is False and info["action"] == "chat_with_user"
    with pytest.raises(RuntimeError, match="call reset"):
        gym.step({"tool": PLAN[0].tool, "args": PLAN[0].args})


def test_the_message_after_the_solution_earns_its_reward(gym: ScenarioEnv) -> None:
    for call in PLAN:
        gym.step({"tool": call.tool, "args": call.args})
    _, reward, terminated, _, info = gym.step({"tool": "chat_with_user", "args": {"content": "done"}})
    assert terminated and reward == 1.0 and info["all_passed"]


@pytest.mark.parametrize("arguments", ["{}", '{"text": "hi"}', "[1]", '{"content": 5}', '{"content": null}'])
def test_a_message_without_text_content_is_a_bad_action_and_the_episode_goes_on(gym: ScenarioEnv,
                                                                                 arguments: str) -> None:
    obs, reward, terminated, _, info = gym.step(_chat(arguments))
    assert not terminated and reward == 0.0 and info["is_error"]
    assert "chat_with_user" in json.loads(obs)["error"] and json.loads(obs)["error_kind"] == "action"
    for call in PLAN:
        gym.step({"tool": call.tool, "args": call.args})
    assert gym.step({"done": True})[1] == 1.0
