"""Spec: under an imported env's rules, a tool call's arguments are read exactly as EnvScaler's runtime reads
them (`parse_action`: `json.loads` of the text, then `check_vaild_action`: an object or "Error: Invalid
action"), in the gym and in rollouts. Text `json.loads` cannot read (a trailing comma, single quotes, a ```json
fence, prose before the object, `//` comments, Python's `True`, `""`) is "Error: Failed to parse response to
action"; text that reads as no object (double-encoded JSON, `null`) is "Error: Invalid action"; either way the
call never runs and the episode goes on. A key named twice keeps its last value, as `json.loads` does. The
stored assistant message keeps the arguments the model sent. A synthesized env keeps the factory's reading
(docs/llm.md), where "" is no arguments: a missing required argument is an error observation and the
episode goes on (docs/exports.md). Before (differential round 3, F2/F3) the gym and rollouts repaired and
ran such calls (1.0 where EnvScaler gives 0.0), ended the episode at 0 on `""`/`null` (EnvScaler 1.0 after
the solution), refused a repeated key (EnvScaler 1.0), and stored the repaired text.

Expected values are EnvScaler's own: its runtime (`EnvScalerNonConvRLEnv`) was run on `library_envscaler`'s
files with each call, then chat_with_user "Task Completed": every unreadable form above 0.0 (double-encoded:
"Error: Invalid action"; the others: "Error: Failed to parse response to action"); get_book("") and
get_book("null"), then lend_book(b1, m1), then "Task Completed": 1.0; the repeated key
`{"book_id": "b9", "book_id": "b1", ...}`: 1.0; chat_with_user with a trailing comma, then the solution: 1.0."""

from __future__ import annotations

import asyncio
import json
import threading
from http.server import ThreadingHTTPServer
from typing import Any

import pytest

from envscaler_core.config import Settings
from envscaler_core.gym import ScenarioEnv
from envscaler_core.rollout import run_rollout
from tests.rollout import library_envscaler as lib
from tests.rollout.test_empty_replies_under_envscaler_rules import Replies, _Endpoint

PARSE_FAILED = "Error: Failed to parse response to action"  # EnvScaler's words
INVALID = "Error: Invalid action"
LEND = '{"book_id": "b1", "member_id": "m1"}'
UNREADABLE = {
    "trailing comma": ('{"book_id": "b1", "member_id": "m1",}', PARSE_FAILED),
    "single quotes": ("{'book_id': 'b1', 'member_id': 'm1'}", PARSE_FAILED),
    "json fence": ("```json\n" + LEND + "\n```", PARSE_FAILED),
    "prose before": ("Here: " + LEND, PARSE_FAILED),
    "comment": ('{"book_id": "b1", // the book\n "member_id": "m1"}', PARSE_FAILED),
    "python True": ('{"book_id": "b1", "member_id": "m1", "note": True}', PARSE_FAILED),
    "double-encoded": (json.dumps(LEND), INVALID),
}
DONE = {"id": "done", "type": "function", "function": {"name": "chat_with_user",
                                                       "arguments": '{"content": "Task Completed"}'}}


def tool_call(name: str, arguments: str, call_id: str = "c1") -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def assistant(*calls: dict[str, Any]) -> dict[str, Any]:
    return {"role": "assistant", "content": None, "tool_calls": list(calls)}


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory, sandbox_pool: Any) -> dict[str, Any]:
    _, env, scenario = lib.import_library(tmp_path_factory.mktemp("library"), sandbox_pool)
    return {"env": env, "scenario": scenario, "pool": sandbox_pool}


def play(imported: dict[str, Any], calls: list[dict[str, Any]], rules: str = "envscaler"
         ) -> tuple[list[str], float, bool]:
    """Each call as a gym action, then the message to the user: observations, reward, whether the first
    observation ended the episode."""
    env = imported["env"].model_copy(update={"episode_rules": rules})
    gym = ScenarioEnv(env, [imported["scenario"]], imported["pool"])
    gym.reset(options={"scenario_index": 0})
    observations = []
    try:
        for action in [*calls, DONE]:
            obs, reward, terminated, truncated, _ = gym.step(action)
            observations.append(obs)
            if terminated or truncated:
                return observations, reward, len(observations) == 1 and len(calls) > 0
    finally:
        gym.close()
    raise AssertionError("the episode never ended")


def roll(imported: dict[str, Any], agent: Any, rules: str = "envscaler", gateway: Any = None,
         settings: Settings | None = None) -> Any:
    env = imported["env"].model_copy(update={"episode_rules": rules})
    return asyncio.run(run_rollout(env, imported["scenario"], imported["pool"], gateway, settings or Settings(),
                                   agent=agent))


@pytest.mark.parametrize("form", list(UNREADABLE))
def test_arguments_envscaler_cannot_read_are_not_run_in_the_gym(imported: dict[str, Any], form: str) -> None:
    text, says = UNREADABLE[form]
    observations, reward, ended_first = play(imported, [tool_call("lend_book", text)])
    assert says in json.loads(observations[0])["error"] and not ended_first
    assert reward == 0.0


@pytest.mark.parametrize(("text", "says"), [("", PARSE_FAILED), ("null", INVALID)])
def test_empty_or_null_arguments_are_not_run_and_the_episode_goes_on(imported: dict[str, Any], text: str,
                                                                     says: str) -> None:
    observations, reward, _ = play(imported, [tool_call("get_book", text), tool_call("lend_book", LEND)])
    assert says in json.loads(observations[0])["error"]
    assert len(observations) == 3 and reward == 1.0


def test_a_key_named_twice_keeps_its_last_value_as_json_loads_does(imported: dict[str, Any]) -> None:
    observations, reward, _ = play(imported, [tool_call("lend_book", '{"book_id": "b9", "book_id": "b1", "member_id": "m1"}')])
    assert json.loads(observations[0]) == {"success": True} and reward == 1.0


def test_a_chat_with_user_call_envscaler_cannot_read_does_not_end_the_episode(imported: dict[str, Any]) -> None:
    unread = tool_call("chat_with_user", '{"content": "Task Completed",}')
    observations, reward, _ = play(imported, [unread, tool_call("lend_book", LEND)])
    assert PARSE_FAILED in json.loads(observations[0])["error"] and reward == 1.0


def test_a_synthesized_env_keeps_the_factorys_lenient_reading(imported: dict[str, Any]) -> None:
    observations, reward, _ = play(imported, [tool_call("lend_book", UNREADABLE["trailing comma"][0])], rules="factory")
    assert json.loads(observations[0]) == {"success": True} and reward == 1.0


def test_a_synthesized_env_answers_empty_arguments_with_an_error_and_goes_on(imported: dict[str, Any]) -> None:
    observations, reward, ended_first = play(imported, [tool_call("get_book", ""), tool_call("lend_book", LEND)],
                                             rules="factory")
    assert "book_id" in json.loads(observations[0])["error"] and not ended_first
    assert len(observations) == 3 and reward == 1.0


def test_a_rollout_does_not_run_unreadable_arguments_and_stores_them_as_sent(imported: dict[str, Any]) -> None:
    text = UNREADABLE["trailing comma"][0]
    traj = roll(imported, Replies(assistant(tool_call("lend_book", text)), assistant(DONE)))
    assert traj.messages[2]["tool_calls"][0]["function"]["arguments"] == text
    assert PARSE_FAILED in json.loads(traj.messages[3]["content"])["error"]
    assert traj.termination == "agent_done" and traj.reward == 0.0


def test_a_rollout_goes_on_after_empty_arguments(imported: dict[str, Any]) -> None:
    traj = roll(imported, Replies(assistant(tool_call("get_book", "")), assistant(tool_call("lend_book", LEND, "c2")),
                                  assistant(DONE)))
    assert PARSE_FAILED in json.loads(traj.messages[3]["content"])["error"]
    assert traj.termination == "agent_done" and traj.reward == 1.0


def test_a_models_unreadable_arguments_are_stored_as_the_model_sent_them(imported: dict[str, Any]) -> None:
    from envscaler_core.llm import LLMGateway
    from tests.fixtures.llm import mock_llm_settings

    text = UNREADABLE["single quotes"][0]
    _Endpoint.replies = [assistant(tool_call("lend_book", text)), assistant(DONE)]
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Endpoint)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        settings = Settings(llm=mock_llm_settings(f"http://127.0.0.1:{server.server_address[1]}/v1", cache=False))
        traj = roll(imported, None, gateway=LLMGateway(settings.llm), settings=settings)
    finally:
        server.shutdown()
        server.server_close()
    assert traj.messages[2]["tool_calls"][0]["function"]["arguments"] == text
    assert PARSE_FAILED in json.loads(traj.messages[3]["content"])["error"] and traj.reward == 0.0
