"""Spec: under an imported env's rules, an assistant reply with no tool calls and empty or null content is
EnvScaler's parse failure: a user turn "Error: Failed to parse response to action" and the episode goes on
(max_steps still bounds it); text alone, blank space included, stays the agent's last word and is stored as
the agent wrote it (differential re-check 2026-11-26, F3 and W1: such replies ended the episode at 0 on the
initial state, and "   " was stored as "").

Expected values are EnvScaler's own: its runtime (`EnvScalerNonConvRLEnv`) was run by hand on
`library_envscaler`'s files with a reply of content "" (and, separately, null) and no calls, then
lend_book(b1, m1), then chat_with_user "Task Completed": "Error: Failed to parse response to action", not
terminated, then 1.0."""

from __future__ import annotations

import asyncio
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from envscaler_core.config import Settings
from envscaler_core.rollout import AgentTurn, run_rollout
from tests.rollout import library_envscaler as lib

PARSE_FAILED = "Error: Failed to parse response to action"  # EnvScaler's words

LEND = {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function", "function": {
    "name": "lend_book", "arguments": '{"book_id": "b1", "member_id": "m1"}'}}]}
DONE = {"role": "assistant", "content": None, "tool_calls": [{"id": "c2", "type": "function", "function": {
    "name": "chat_with_user", "arguments": '{"content": "Task Completed"}'}}]}


class Replies:
    """A scripted agent object: these assistant messages, in order, then the last one again."""

    name = "scripted-replies"

    def __init__(self, *messages: dict[str, Any]) -> None:
        self.messages, self.turn = list(messages), 0

    async def step(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> AgentTurn:
        self.turn += 1
        return AgentTurn(message=dict(self.messages[min(self.turn, len(self.messages)) - 1]))


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory, sandbox_pool: Any) -> dict[str, Any]:
    _, env, scenario = lib.import_library(tmp_path_factory.mktemp("library"), sandbox_pool)
    return {"env": env, "scenario": scenario, "pool": sandbox_pool}


def _roll(imported: dict[str, Any], agent: Replies, rules: str = "envscaler", max_steps: int = 30) -> Any:
    env = imported["env"].model_copy(update={"episode_rules": rules})
    settings = Settings().model_copy(update={"rollout": Settings().rollout.model_copy(update={"max_steps": max_steps})})
    return asyncio.run(run_rollout(env, imported["scenario"], imported["pool"], None, settings, agent=agent))


@pytest.mark.parametrize("content", ["", None])
def test_an_empty_reply_is_a_parse_failure_and_the_episode_goes_on(imported: dict[str, Any], content: Any) -> None:
    traj = _roll(imported, Replies({"role": "assistant", "content": content}, LEND, DONE))
    assert traj.messages[3] == {"role": "user", "content": PARSE_FAILED}
    assert traj.termination == "agent_done" and traj.reward == 1.0 and traj.steps == 3


def test_empty_replies_are_still_bounded_by_max_steps(imported: dict[str, Any]) -> None:
    traj = _roll(imported, Replies({"role": "assistant", "content": ""}), max_steps=4)
    assert traj.termination == "max_steps" and traj.steps == 4
    assert sum(m == {"role": "user", "content": PARSE_FAILED} for m in traj.messages) == 4


def test_blank_text_is_the_agents_last_word_stored_as_written(imported: dict[str, Any]) -> None:
    traj = _roll(imported, Replies({"role": "assistant", "content": "   "}, LEND, DONE))
    assert traj.termination == "agent_done" and traj.steps == 1 and traj.reward == 0.0
    assert traj.messages[2]["content"] == "   "


def test_factory_rules_end_at_an_empty_reply(imported: dict[str, Any]) -> None:
    traj = _roll(imported, Replies({"role": "assistant", "content": ""}, LEND, DONE), rules="factory")
    assert traj.termination == "agent_done" and traj.steps == 1


class _Endpoint(BaseHTTPRequestHandler):
    """An OpenAI-compatible endpoint answering each request by the number of assistant turns in it: these
    replies, in order (a scripted server of the spec's own, as the differential re-check's)."""

    replies: list[dict[str, Any]] = []

    def log_message(self, *args: Any) -> None:
        pass

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))))
        turn = sum(1 for m in body.get("messages", []) if m.get("role") == "assistant")
        message = self.replies[min(turn, len(self.replies) - 1)]
        data = json.dumps({"id": "r", "object": "chat.completion", "created": 0, "model": body.get("model", "m"),
                           "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                           "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def test_blank_text_from_a_model_is_stored_as_the_model_sent_it(imported: dict[str, Any]) -> None:
    from envscaler_core.llm import LLMGateway
    from tests.fixtures.llm import mock_llm_settings

    _Endpoint.replies = [{"role": "assistant", "content": "   "}, LEND, DONE]
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Endpoint)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        settings = Settings(llm=mock_llm_settings(f"http://127.0.0.1:{server.server_address[1]}/v1", cache=False))
        env = imported["env"]
        traj = asyncio.run(run_rollout(env, imported["scenario"], imported["pool"], LLMGateway(settings.llm), settings))
    finally:
        server.shutdown()
        server.server_close()
    assert traj.messages[2]["content"] == "   " and traj.termination == "agent_done" and traj.reward == 0.0
