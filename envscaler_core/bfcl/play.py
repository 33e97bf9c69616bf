"""Play one BFCL multi-turn task the way BFCL's FC inference loop does, through our agent interface.

Per turn: the turn's user message(s) are appended (at a held-out turn: the fixed "I have updated some
more functions" prompt, with the held-out tools added); the agent is asked for a step; a step with
tool calls is decoded to call strings, each executed in order and answered by one tool message
whose content is BFCL's observation text; a step without tool calls (or one that cannot be decoded)
ends the turn. More than `MAX_STEPS_PER_TURN` tool steps in a turn force-quits the task: that turn is
kept and play stops, as in BFCL's handler (scored by the checker when it was the last turn, else
force-terminated: `evaluate.py`). The agent is any `rollout.agents.Agent`: the LLM over
the gateway (native function calling, no system prompt, as BFCL's OpenAI FC handler) or `GoldAgent`.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from pydantic import Field

from envscaler_core.bfcl.calls import UndecodableCalls, decode_tool_calls, parse_call
from envscaler_core.bfcl.data import DEFAULT_TEMPERATURE, MAX_STEPS_PER_TURN, BFCLTask
from envscaler_core.bfcl.executor import TaskExecutor
from envscaler_core.bfcl.schemas import tools_for
from envscaler_core.models.base import Model
from envscaler_core.models.trajectory import TokenUsage
from envscaler_core.prompts.agent import AGENT_BFCL
from envscaler_core.rollout.agents import Agent, AgentTurn, usage_of

UNDECODABLE_REPLY = "Error during decoding: {reason}. The turn ends here."


class Playthrough(Model):
    """What happened in one task: the conversation and the decoded calls per turn per step."""

    messages: list[dict[str, Any]] = Field(default_factory=list)
    decoded: list[list[list[str]]] = Field(default_factory=list, description="Turn -> tool steps -> call strings.")
    observations: list[str] = Field(default_factory=list)
    steps: int = 0
    force_quit: bool = False
    usage: TokenUsage = Field(default_factory=TokenUsage)


def sent_tool_calls(sent: dict[str, Any]) -> list[dict[str, Any]]:
    """The calls BFCL's OpenAI FC handler reads: the `tool_calls` field only, arguments as sent. Tool
    calls written as text, the legacy `function_call`, and empty or null arguments, which our gateway
    recovers for the factory, are not calls there (a turn that ends, or one that cannot be decoded), so
    a score here is comparable with the official harness's (a red team scored 1.0 where it gives 0)."""
    calls = sent.get("tool_calls")
    return [c if isinstance(c, dict) else {} for c in calls] if isinstance(calls, list) else []


def as_read(sent: dict[str, Any], step: int) -> dict[str, Any]:
    """The assistant message as BFCL's handler sends it back: as the endpoint sent it (the SDK re-sends
    the fields that were set), so `content: null`, `tool_calls: []` or `null`, arguments as an object or
    a text, extra fields and reasoning written in the content all go back as they came. Before, the
    message went back as our gateway normalises it (`tool_calls: []` and nulls dropped, `null` content
    as "", object arguments re-serialised). Two exceptions: a call without an id gets one
    (`call_bfcl_<step>_<i>`), so the tool message answering it can name it (BFCL sends `None`), and the
    gateway does not send reasoning fields (`reasoning_content`, ...) back (docs/llm.md)."""
    message = {**sent, "role": "assistant"}
    calls = sent.get("tool_calls")
    if isinstance(calls, list):
        message["tool_calls"] = [
            call if isinstance(call, dict) and call.get("id") else
            {**(call if isinstance(call, dict) else {"type": "function", "function": {}}), "id": f"call_bfcl_{step}_{i}"}
            for i, call in enumerate(calls)]
    return message


def current_turn(task: BFCLTask, messages: list[dict[str, Any]]) -> int:
    """Which turn a conversation is in, from how many user messages it has (turns may hold several)."""
    users, seen = sum(1 for m in messages if m.get("role") == "user"), 0
    for turn in range(len(task.turns)):
        seen += len(task.user_messages(turn))
        if users <= seen:
            return turn
    return len(task.turns) - 1


def steps_this_turn(messages: list[dict[str, Any]]) -> int:
    """Assistant messages since the last user message."""
    last_user = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=-1)
    return sum(1 for m in messages[last_user + 1:] if m.get("role") == "assistant")


class ModelAgent:
    """The model behind the gateway, in native function calling, with BFCL's (empty) system prompt."""

    def __init__(self, gateway: Any, model: str, temperature: float | None = DEFAULT_TEMPERATURE) -> None:
        self.gateway, self.name, self.temperature = gateway, model, temperature

    async def step(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> AgentTurn:
        """The message as the endpoint sent it, whatever its `finish_reason` (the gateway's `as_sent`):
        `play_task` reads its calls as BFCL does. Every request carries the temperature, as BFCL's handlers
        send theirs."""
        reply = await self.gateway.chat(messages, prompt=AGENT_BFCL, stage="agent", tools=tools, model=self.name,
                                        temperature=self.temperature, as_sent=True)
        sent = getattr(reply, "sent", None)
        return AgentTurn(message=dict(sent if sent is not None else reply.message),
                         usage=usage_of(getattr(reply, "usage", None)))


class GoldAgent:
    """Replays the ground truth: each turn's calls in one step, then a text reply ending the turn.
    `drop_last=True` leaves out the last call of every turn (a deliberately wrong agent)."""

    def __init__(self, task: BFCLTask, drop_last: bool = False) -> None:
        self.task, self.drop_last = task, drop_last
        self.name = "gold-drop-last" if drop_last else "gold"

    async def step(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> AgentTurn:
        turn = current_turn(self.task, messages)
        plan = list(self.task.ground_truth[turn])
        if self.drop_last and plan:
            plan = plan[:-1]
        if steps_this_turn(messages) or not plan:
            return AgentTurn(message={"role": "assistant", "content": "Done."})
        calls = []
        for i, text in enumerate(plan):
            name, kwargs = parse_call(text, self.task.involved_classes)
            calls.append({"id": f"gold_{turn}_{i}", "type": "function",
                          "function": {"name": name, "arguments": json.dumps(kwargs)}})
        return AgentTurn(message={"role": "assistant", "content": None, "tool_calls": calls})


def _add(a: TokenUsage, b: TokenUsage) -> TokenUsage:
    return TokenUsage(prompt_tokens=a.prompt_tokens + b.prompt_tokens,
                      completion_tokens=a.completion_tokens + b.completion_tokens)


async def play_task(task: BFCLTask, agent: Agent, executor: TaskExecutor, out: Playthrough | None = None) -> Playthrough:
    """Run all turns of `task` into `out`; LLM errors propagate (the caller decides what they mean), and
    `out` keeps what was played until then (the turn under way included), so a task that ends early
    is stored with its conversation, calls and usage."""
    out = Playthrough() if out is None else out
    for turn in range(len(task.turns)):
        tools = tools_for(task, turn)
        out.messages.extend(task.user_messages(turn))
        turn_steps: list[list[str]] = []
        out.decoded.append(turn_steps)  # filled as the turn goes
        tool_steps = 0
        while True:
            reply = await agent.step(out.messages, tools)
            out.steps += 1
            out.usage = _add(out.usage, reply.usage)
            message = as_read(reply.message, out.steps)
            out.messages.append(message)
            try:
                calls = decode_tool_calls(sent_tool_calls(reply.message))
            except UndecodableCalls as exc:
                # BFCL ends the turn; every call still gets its one tool message, so the history stays valid
                for tc in message.get("tool_calls") or []:
                    out.messages.append({"role": "tool", "tool_call_id": tc["id"],
                                         "content": UNDECODABLE_REPLY.format(reason=exc)})
                break
            if not calls:
                break
            turn_steps.append(calls)
            observations = await asyncio.to_thread(executor.execute_step, calls)
            for observation, tc in zip(observations, message["tool_calls"]):
                out.observations.append(observation)
                out.messages.append({"role": "tool", "tool_call_id": tc["id"], "content": observation})
            tool_steps += 1
            if tool_steps > MAX_STEPS_PER_TURN:
                out.force_quit = True
                break
        if out.force_quit:
            break
    return out
