"""The tools an SFT row defines: the env's, plus `chat_with_user` when the trajectory calls it.

`chat_with_user` is no method of the env (synth/reserved.py): EnvScaler's runtime takes a call to it as the
agent's message to the user, and so do our rollouts (rollout/chat_call.py), so the env's tool list never
holds it. A row whose assistant calls it without defining it is a call to an undefined tool for OpenAI's
fine-tuning format and for chat templates (`apply_chat_template(messages, tools=...)`): the model would be
trained to call a tool it is never shown (differential re-check 2026-11-26, T8). Such rows get its schema
(one `content` string, the argument EnvScaler's runtime reads)."""

from __future__ import annotations

from typing import Any

from envscaler_core.models.env import ToolFunction, ToolSchema
from envscaler_core.models.trajectory import Trajectory
from envscaler_core.synth.reserved import CHAT_WITH_USER

CHAT_WITH_USER_TOOL = ToolSchema(function=ToolFunction(
    name=CHAT_WITH_USER,
    description=("Send a message to the user. In a task given without a user to talk to, call it with "
                 "'Task Completed' when the task is done: it ends the episode."),
    parameters={"type": "object", "properties": {"content": {"type": "string", "description": "The message."}},
                "required": ["content"]},
))


def called_names(messages: list[dict[str, Any]]) -> set[str]:
    """The tool names the assistant turns call."""
    return {str(call["function"].get("name")) for m in messages if m.get("role") == "assistant"
            for call in (m.get("tool_calls") or []) if isinstance(call, dict) and isinstance(call.get("function"), dict)}


def row_tools(traj: Trajectory) -> list[ToolSchema]:
    """`traj.tools`, with `chat_with_user`'s schema added when the trajectory calls it and no tool has its name."""
    if CHAT_WITH_USER in called_names(traj.messages) and all(t.function.name != CHAT_WITH_USER for t in traj.tools):
        return [*traj.tools, CHAT_WITH_USER_TOOL]
    return list(traj.tools)
