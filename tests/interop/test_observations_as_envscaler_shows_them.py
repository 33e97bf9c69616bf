"""Spec: an imported env's tool results and refusals reach the agent as EnvScaler's runtime shows them.

* Text is shown as its characters (`« Dune ☄ » prêté à m1`), in the gym and in a rollout's stored tool message,
  as EnvScaler's `str()` of the result and `serve-mcp` show it; before, the gym escaped every non-ASCII
  character (`\\u00ab Dune \\u2604 ...`; outside check rt22-R13, F2).
* A tool call with no `arguments` key gets EnvScaler's "Error: Failed to parse response to action" (its
  `parse_action` reads `action['arguments']`, a KeyError) and the episode goes on; before, the gym answered
  "Error: Invalid action: the arguments are null" (F3). `"arguments": null` stays "Error: Invalid action".

Expected values are EnvScaler's own: its runtime (`EnvScalerNonConvRLEnv`) was run on these files: lend_book
observed `{'success': True, 'message': '« Dune ☄ » prêté à m1'}`, a call without `arguments` observed "Error: Failed
to parse response to action", and the solution then scored 1.0."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from envscaler_core.config import Settings
from envscaler_core.gym import load_rl_set
from envscaler_core.models import ToolCall
from envscaler_core.rollout import ScriptedAgent, run_rollout
from envscaler_core.rollout.rules import INVALID_ACTION, PARSE_FAILED
from tests.interop.conftest import import_one_env

CODE = '''class Lib:
    def __init__(self, init_config: dict):
        self.books = {}

    def lend_book(self, book_id: str, member_id: str) -> dict:
        """Lend a book to a member."""
        b = self.books.get(book_id)
        if b is None or b["status"] != "available":
            return {"success": False, "error": f"« {book_id} » introuvable ✗"}
        b["status"] = "lent"
        return {"success": True, "message": f"« {b['title']} » prêté à {member_id}"}
'''
ENV = {"env_id": "env_u", "environment_introduction": "A library.", "constraints_rules": [], "env_class_name": "Lib",
       "env_class_code": CODE,
       "tools": [{"type": "function", "function": {
           "name": "lend_book", "description": "Lend a book to a member.",
           "parameters": {"type": "object", "properties": {"book_id": {"type": "string"},
                                                           "member_id": {"type": "string"}},
                          "required": ["book_id", "member_id"]}}}],
       "operation_list": [{"operation_name": "lend_book", "operation_type": "state_change"}]}
LEND = {"env_id": "env_u", "env_class_name": "Lib", "task_id": "t1",
        "init_config": {"books": {"b1": {"title": "Dune ☄", "status": "available"}}},
        "task": "Lend « Dune » (b1) to m1.", "checklist": ["lent"],
        "checklist_with_func": [{"check_item": "lent", "check_func": (
            "def check_func(final_state):\n    return final_state['books']['b1']['status'] == 'lent'")}]}
SOLUTION = [{"name": "lend_book", "arguments": {"book_id": "b1", "member_id": "m1"}}]
LENT = "« Dune ☄ » prêté à m1"


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory, sandbox_pool: Any) -> dict[str, Any]:
    return import_one_env(tmp_path_factory.mktemp("observed"), ENV, [LEND], {"t1": SOLUTION}, sandbox_pool, "ob",
                          rl_export=True)


def _gym_play(imported: dict[str, Any], actions: list[dict[str, Any]]) -> tuple[list[str], float]:
    (gym,) = load_rl_set(imported["rl"], imported["pool"])
    try:
        gym.reset(options={"scenario_index": 0})
        observations = [gym.step(a)[0] for a in actions]
        reward = gym.step({"tool": "chat_with_user", "args": {"content": "Task Completed"}})[1]
    finally:
        gym.close()
    return observations, reward


def test_the_gym_shows_a_results_characters(imported: dict[str, Any]) -> None:
    (obs,), reward = _gym_play(imported, [{"tool": "lend_book", "args": {"book_id": "b1", "member_id": "m1"}}])
    assert LENT in obs and "\\u" not in obs and reward == 1.0


def test_a_rollouts_stored_tool_message_shows_the_characters(imported: dict[str, Any]) -> None:
    agent = ScriptedAgent([ToolCall(tool=c["name"], args=c["arguments"]) for c in SOLUTION])
    traj = asyncio.run(run_rollout(imported["accepted"][0], imported["promoted"][0], imported["pool"], None,
                                   Settings(), agent=agent))
    (message,) = [m for m in traj.messages if m["role"] == "tool"]
    assert LENT in message["content"] and "\\u" not in message["content"]


def test_a_call_without_arguments_gets_envscalers_parse_failure_and_goes_on(imported: dict[str, Any]) -> None:
    bare = {"id": "c1", "type": "function", "function": {"name": "lend_book"}}
    (obs, _), reward = _gym_play(imported, [bare, {"tool": "lend_book", "args": {"book_id": "b1", "member_id": "m1"}}])
    assert json.loads(obs)["error"].startswith(PARSE_FAILED) and reward == 1.0


def test_chat_with_user_without_arguments_gets_the_parse_failure_too(imported: dict[str, Any]) -> None:
    bare = {"id": "c1", "type": "function", "function": {"name": "chat_with_user"}}
    (obs,), _ = _gym_play(imported, [bare])
    assert PARSE_FAILED in json.loads(obs)["error"]


def test_null_arguments_stay_an_invalid_action(imported: dict[str, Any]) -> None:
    null = {"id": "c1", "type": "function", "function": {"name": "lend_book", "arguments": None}}
    (obs,), _ = _gym_play(imported, [null])
    assert json.loads(obs)["error"].startswith(INVALID_ACTION)
