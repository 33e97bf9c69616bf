"""Spec: an SFT row whose trajectory calls `chat_with_user` defines it in its `tools`, in every SFT format
(differential re-check 2026-11-26, T8: a row called chat_with_user, with an extra argument `x`, answered by
{"type": "user", "content": "Task finished"}, while its `tools` had no such tool, so OpenAI's and Hugging
Face's consumers saw a call to an undefined tool). A row that never calls it is left as the env's tools."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from envscaler_core.config import Settings
from envscaler_core.export.envscaler_sft import envscaler_sft_row
from envscaler_core.export.hf_sft import hf_line
from envscaler_core.export.llamafactory import llamafactory_line
from envscaler_core.export.sft import sft_line
from envscaler_core.models import ToolCall
from envscaler_core.rollout import ScriptedAgent, run_rollout
from tests.rollout import library_envscaler as lib

CHAT = {"name": "chat_with_user", "description": ("Send a message to the user. In a task given without a user to "
                                                  "talk to, call it with 'Task Completed' when the task is done: it "
                                                  "ends the episode."),
        "parameters": {"type": "object", "properties": {"content": {"type": "string", "description": "The message."}},
                       "required": ["content"]}}


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory, sandbox_pool: Any) -> dict[str, Any]:
    _, env, scenario = lib.import_library(tmp_path_factory.mktemp("library"), sandbox_pool)

    def roll(plan: list[ToolCall]) -> Any:
        return asyncio.run(run_rollout(env, scenario, sandbox_pool, None, Settings(), agent=ScriptedAgent(plan)))

    lend = ToolCall(tool="lend_book", args={"book_id": "b1", "member_id": "m1"})
    return {"chat": roll([lend, ToolCall(tool="chat_with_user", args={"content": "Task Completed", "x": 1})]),
            "plain": roll([lend])}


def _names(tools: list[dict[str, Any]]) -> list[str]:
    return [t["function"]["name"] if "function" in t else t["name"] for t in tools]


def test_the_trajectory_ends_at_the_chat_with_user_call(played: dict[str, Any]) -> None:
    traj = played["chat"]
    assert traj.termination == "agent_done" and traj.reward == 1.0
    assert json.loads(traj.messages[-1]["content"]) == {"type": "user", "content": "Task finished"}


def test_openai_rows_define_chat_with_user(played: dict[str, Any]) -> None:
    tools = sft_line("fp", played["chat"])["tools"]
    assert _names(tools) == ["get_book", "lend_book", "chat_with_user"] and tools[-1]["function"] == CHAT


def test_hugging_face_rows_define_chat_with_user(played: dict[str, Any]) -> None:
    tools = hf_line("fp", played["chat"])["tools"]
    assert _names(tools) == ["get_book", "lend_book", "chat_with_user"] and tools[-1]["function"] == CHAT


def test_llamafactory_rows_define_chat_with_user(played: dict[str, Any]) -> None:
    # sharegpt rows must end on a model turn, as a conversational episode's do after the user's answer
    traj = played["chat"]
    traj = traj.model_copy(update={"messages": [*traj.messages, {"role": "assistant", "content": "Done."}]})
    row, why = llamafactory_line("fp", traj)
    assert why is None and row is not None
    assert _names(json.loads(row["tools"])) == ["get_book", "lend_book", "chat_with_user"]


def test_envscaler_rows_define_chat_with_user(played: dict[str, Any]) -> None:
    row, why = envscaler_sft_row("fp", played["chat"])
    assert why is None and row is not None
    assert _names(json.loads(row["tools"])) == ["get_book", "lend_book", "chat_with_user"]


def test_rows_that_never_call_it_keep_the_envs_tools(played: dict[str, Any]) -> None:
    assert _names(sft_line("fp", played["plain"])["tools"]) == ["get_book", "lend_book"]
