"""Spec: a gym action has exactly one of the documented shapes (red team 9, F6). An action holding both the
`{"tool", "args"}` keys and an OpenAI tool_call's `function`, or keys outside its shape, runs nothing: it is
an error observation naming the keys, and the episode goes on, as for other bad actions."""

from __future__ import annotations

import json
from typing import Any

import pytest

from envscaler_core.gym import ScenarioEnv
from tests.scenarios.helpers import PLAN

LEND = {"name": "lend_book", "arguments": json.dumps({"book_id": "b1", "member": "Ana"})}


@pytest.mark.parametrize(("action", "names"), [
    ({"tool": "get_book", "args": {"book_id": "b1"}, "function": LEND}, ["'function'", "'tool'"]),
    ({"tool": "get_book", "args": {"book_id": "b1"}, "foo": 1}, ["'foo'"]),
    ({"id": "c1", "type": "function", "function": LEND, "foo": 1}, ["'foo'"]),
])
def test_an_action_of_no_one_shape_runs_nothing_and_names_the_keys(gym: ScenarioEnv, action: dict[str, Any],
                                                                   names: list[str]) -> None:
    obs, reward, terminated, truncated, info = gym.step(action)
    error = json.loads(obs)
    assert error["error_kind"] == "action" and all(name in error["error"] for name in names)
    assert info["is_error"] and info["tool"] is None and (reward, terminated, truncated) == (0.0, False, False)
    # the episode goes on, and nothing of the refused action ran: lending b1 still succeeds
    assert all(json.loads(gym.step({"tool": c.tool, "args": c.args})[0])["success"] for c in PLAN)
    assert gym.step({"done": True})[1] == 1.0
