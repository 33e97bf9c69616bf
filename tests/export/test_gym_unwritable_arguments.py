"""Spec: a `{"tool", "args"}` action whose args dict cannot be written as JSON (nested past the recursion
limit, a lone surrogate, an int past Python's digit limit) is an error observation worded as the text
path words it, and the episode goes on (red team 7, F4: a 100,000-deep dict raised RecursionError out of
step())."""

from __future__ import annotations

import json
from typing import Any

import pytest

from envscaler_core.gym import ScenarioEnv
from tests.export.records import lend_dune, verified
from tests.fixtures.values import nested_dict
from tests.scenarios.helpers import library_env, scenario


@pytest.fixture
def gym(runtime) -> ScenarioEnv:  # type: ignore[no-untyped-def]
    env = ScenarioEnv(library_env(), [verified(scenario()), lend_dune()], runtime)
    env.reset(options={"scenario_index": 0})
    yield env
    env.close()


@pytest.mark.parametrize(("args", "text", "wording"), [
    ({"book_id": nested_dict(100_000)}, '{"book_id":' + "[" * 100 + "]" * 100 + "}", "the arguments are nested more than 64 levels deep"),
    ({"book_id": "\ud800"}, '{"book_id": "\\ud800"}', "the arguments holds text that is not valid Unicode"),
    ({"book_id": 10**5000}, None, "the arguments holds a value that is not JSON (Exceeds the limit"),
])
def test_unwritable_args_are_an_error_observation_worded_as_text_arguments(
        gym: ScenarioEnv, args: dict[str, Any], text: str | None, wording: str) -> None:
    obs, reward, terminated, truncated, info = gym.step({"tool": "get_book", "args": args})
    assert json.loads(obs) == {"error": json.loads(obs)["error"], "error_kind": "schema"}
    assert json.loads(obs)["error"].startswith(wording) and info["is_error"] and not terminated and not truncated
    if text is not None:
        as_text, *_ = gym.step({"id": "c", "type": "function", "function": {"name": "get_book", "arguments": text}})
        assert json.loads(as_text)["error"].startswith(wording)
    follow, *_ = gym.step({"tool": "get_book", "args": {"book_id": "b1"}})
    assert json.loads(follow)["success"] is True


def test_argument_text_naming_a_key_twice_is_refused_not_read_as_its_last_value(gym: ScenarioEnv) -> None:
    """Red team 7, F7: `"book_id":"b9","book_id":"b1"` ran as b1 (JSON readers keep the last value);
    import and the sandbox's wire refuse such text."""
    call = {"id": "c", "type": "function", "function": {"name": "get_book", "arguments": '{"book_id":"b9","book_id":"b1"}'}}
    obs, _, terminated, _, info = gym.step(call)
    assert json.loads(obs) == {"error": "arguments name the key 'book_id' twice (JSON readers silently keep one)",
                               "error_kind": "schema"}
    assert info["is_error"] and not terminated
