"""Spec: a tool result is observed as its text, non-ASCII characters as they are (`Dune ☄`, `李雷`), in the gym
and in a rollout's stored tool messages alike, as `serve-mcp` and EnvScaler's runtime show them; JSON's own
escapes stay (a newline or an escape character inside a string is `\\n`, `\\u001b`), so an observation is still
one JSON text (outside check rt22-R13, F2: the gym answered `"Dune \\u2604"`, six characters per accented or CJK
character, where serve-mcp and EnvScaler show `Dune ☄`)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest

from envscaler_core.config import Settings
from envscaler_core.gym import ScenarioEnv
from envscaler_core.models import ToolCall
from envscaler_core.rollout import ScriptedAgent, run_rollout
from tests.export.records import verified
from tests.scenarios.helpers import LENT_B1, STATE, library_env, scenario

TITLE = "« Dune ☄ » 李雷 Zoë"
CONTROL = "line\nbreak \x1b[2J"


def _unicode_scenario() -> Any:
    state = json.loads(json.dumps(STATE))
    state["books"]["b1"]["title"] = TITLE
    state["books"]["b2"]["title"] = CONTROL
    return verified(scenario(checks=[LENT_B1])).model_copy(update={"initial_state": state})


@pytest.fixture
def gym(runtime: Any) -> Iterator[ScenarioEnv]:
    env = ScenarioEnv(library_env(), [_unicode_scenario()], runtime)
    env.reset(options={"scenario_index": 0})
    yield env
    env.close()


def test_the_gym_shows_non_ascii_characters_as_they_are(gym: ScenarioEnv) -> None:
    obs, *_ = gym.step({"tool": "get_book", "args": {"book_id": "b1"}})
    assert TITLE in obs and "\\u" not in obs
    assert json.loads(obs)["data"]["title"] == TITLE


def test_the_gym_keeps_json_escapes_for_control_characters(gym: ScenarioEnv) -> None:
    obs, *_ = gym.step({"tool": "get_book", "args": {"book_id": "b2"}})
    assert "\n" not in obs and "\x1b" not in obs and "\\n" in obs and "\\u001b" in obs
    assert json.loads(obs)["data"]["title"] == CONTROL


def test_a_refusal_naming_a_non_ascii_tool_shows_its_name(gym: ScenarioEnv) -> None:
    obs, *_ = gym.step({"tool": "prêter_李", "args": {}})
    assert "prêter_李" in obs and "\\u" not in obs


def test_a_rollouts_stored_tool_messages_show_the_text(runtime: Any) -> None:
    agent = ScriptedAgent([ToolCall(tool="get_book", args={"book_id": "b1"})])
    traj = asyncio.run(run_rollout(library_env(), _unicode_scenario(), runtime, None, Settings(), agent=agent))
    (tool_message,) = [m for m in traj.messages if m["role"] == "tool"]
    assert TITLE in tool_message["content"] and "\\u" not in tool_message["content"]
