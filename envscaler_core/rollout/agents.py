"""Who acts in a rollout: the LLM over the gateway, or a scripted agent for tests and benchmarks.

The loop only needs `Agent.step(messages, tools) -> AgentTurn`, so a scripted agent exercises the
exact same episode, message and reward code as the model does, without an LLM.
"""

from __future__ import annotations

import json
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, Field

from envscaler_core.models.env import AcceptedEnv
from envscaler_core.models.scenario import ToolCall
from envscaler_core.models.trajectory import TokenUsage
from envscaler_core.prompts.agent import DONE_MARKER
from envscaler_core.prompts.base import ChatPrompt


class AgentTurn(BaseModel):
    """One assistant message (OpenAI format) and the tokens it cost."""

    message: dict[str, Any]
    usage: TokenUsage = Field(default_factory=TokenUsage)
    sent: dict[str, Any] | None = None
    """The turn as the endpoint sent it, before the gateway normalised it (None: `message` is as sent). An
    env imported from EnvScaler reads its calls' arguments from here (`rules.with_sent_arguments`)."""


@runtime_checkable
class Agent(Protocol):
    name: str

    async def step(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> AgentTurn: ...


def usage_of(raw: Any) -> TokenUsage:
    """Accept the gateway's usage as a model, a dict or None."""
    if raw is None:
        return TokenUsage()
    get = raw.get if isinstance(raw, dict) else (lambda k, d=0: getattr(raw, k, d))
    return TokenUsage(prompt_tokens=int(get("prompt_tokens", 0) or 0), completion_tokens=int(get("completion_tokens", 0) or 0))


def system_text(prompt: ChatPrompt, env: AcceptedEnv) -> str:
    rules = "\n".join(f"- {r}" for r in env.rules) or "- (none)"
    return prompt.system.format(introduction=env.introduction, rules=rules)


class LLMAgent:
    """The default agent: the chat model over `gateway.chat` with the env's tools."""

    def __init__(self, gateway: Any, prompt: ChatPrompt, model: str, sample: int = 0) -> None:
        self.gateway, self.prompt, self.name, self.sample = gateway, prompt, model, sample

    async def step(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> AgentTurn:
        # `sample` is part of the response-cache key: rollout k of a scenario must not be served rollout 0's turns
        reply = await self.gateway.chat(messages, prompt=self.prompt, stage="agent", tools=tools, sample=self.sample)
        sent = getattr(reply, "sent", None)  # what the endpoint answered, before the gateway normalised it
        message = as_sent(dict(reply.message), sent) if isinstance(sent, dict) else dict(reply.message)
        return AgentTurn(message=message, usage=usage_of(getattr(reply, "usage", None)),
                         sent=sent if isinstance(sent, dict) else None)


def as_sent(msg: dict[str, Any], raw: dict[str, Any]) -> dict[str, Any]:
    """The normalised turn, but with the agent's own text when that is only blank space: normalising strips
    it to "", which changed what the agent said (and EnvScaler's `parse_action` takes "   " as a message to
    the user, not as an empty reply)."""
    said = raw.get("content")
    if (not msg.get("tool_calls") and not msg.get("content") and "reasoning_content" not in msg
            and isinstance(said, str) and said and not said.strip()):
        return {**msg, "content": said}
    return msg


def tool_call_message(calls: list[ToolCall], turn: int, content: str | None = None) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": content,
        "tool_calls": [
            {"id": f"call_{turn}_{i}", "type": "function",
             "function": {"name": c.tool, "arguments": json.dumps(c.args)}}
            for i, c in enumerate(calls)
        ],
    }


class ScriptedAgent:
    """Emits a fixed plan, `per_message` tool calls per assistant message, then the done marker."""

    def __init__(self, plan: list[ToolCall], per_message: int = 1, name: str = "scripted") -> None:
        if per_message < 1:
            raise ValueError("per_message must be >= 1")
        self.plan, self.per_message, self.name = list(plan), per_message, name
        self._turn = 0

    async def step(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> AgentTurn:
        start = self._turn * self.per_message
        chunk = self.plan[start:start + self.per_message]
        self._turn += 1
        if not chunk:
            return AgentTurn(message={"role": "assistant", "content": DONE_MARKER})
        return AgentTurn(message=tool_call_message(chunk, self._turn))


def replay_agent(plan: list[ToolCall], per_message: int = 1) -> ScriptedAgent:
    return ScriptedAgent(plan, per_message, name="scripted-replay")


def do_nothing_agent() -> ScriptedAgent:
    return ScriptedAgent([], name="scripted-noop")
