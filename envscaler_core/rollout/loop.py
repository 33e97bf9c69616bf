"""One rollout: agent <-> environment (and simulated user), then reward from the final state.

Fixes over the reference (§8.14–15): every tool call of an assistant message is answered by exactly one
`tool` message with its id; refused calls (unknown tool, bad JSON, schema violations) become observations
and the episode goes on; hitting max_steps still scores the final state instead of giving 0. A tool that
raises (or whose process dies or times out) ends the episode with reward 0 (`tool_raised`), as in
EnvScaler's runtime, and so does, for an env imported from EnvScaler, a call its runtime runs into a
TypeError; such an env's messages run their first tool call only, as there (`rules.CallRules`). A
`chat_with_user` call is the message to the user, as in EnvScaler's runtime (`chat_call`): it ends a
non-conversational episode and goes to the user simulator in a conversational one. For an imported env, a
reply with neither calls nor text (empty or null content) is EnvScaler's parse failure: a user turn says
so and the episode goes on (`rules.PARSE_FAILED`); text alone, blank space included, is the message to the user.
"""

from __future__ import annotations

import asyncio
from typing import Any

from envscaler_core.config import Settings
from envscaler_core.llm.errors import LLMError, LLMOutputInvalid
from envscaler_core.llm.replies import answer_text, normalise_assistant
from envscaler_core.models.env import AcceptedEnv
from envscaler_core.models.scenario import Scenario
from envscaler_core.models.trajectory import TerminationReason, TokenUsage, Trajectory
from envscaler_core.prompts.agent import AGENT_CONVERSATIONAL, AGENT_NON_CONVERSATIONAL, STOP_MARKER, USER_SIMULATOR
from envscaler_core.rollout.chat_call import chat_of
from envscaler_core.rollout.agents import Agent, AgentTurn, LLMAgent, as_sent, system_text, usage_of
from envscaler_core.rollout.rules import PARSE_FAILED, CallRules, observed_json, with_sent_arguments
from envscaler_core.runtime import Episode, EnvRuntime, EpisodeBreach, open_env_episode
from envscaler_core.scenarios.footprint import SHOWN_PATHS, ChangeLog, collateral
from envscaler_core.scenarios.verify import reference_footprint, score_checks

USER_OPENING = "Hi! How can I help you today?"


def _ends_episode(exc: LLMError) -> bool:
    """Model failures that end one episode as 'error' (still scored, then dropped by the filters): an
    unusable answer, or this episode's prompt refused (`LLMPromptRefused`: over the context, a prompt
    filter), the same failures that fail one item in the batch stages. An outage, a bad key, a spent
    budget or quota, a request whose form the endpoint refuses (`LLMRequestRejected`: every episode would
    meet it) propagates instead: the episode was not really played, so resume must play it."""
    return isinstance(exc, LLMOutputInvalid)


class _UserSim:
    """The simulated user: sees the dialogue with roles flipped (its own lines are `assistant`)."""

    def __init__(self, gateway: Any, scenario: Scenario, sample: int = 0) -> None:
        self.sample = sample
        self.gateway = gateway
        self.history: list[dict[str, Any]] = [
            {"role": "system", "content": USER_SIMULATOR.system.format(task=scenario.task)},
            {"role": "user", "content": USER_OPENING},
        ]
        self.usage = TokenUsage()

    async def say(self, agent_text: str | None = None) -> str:
        if agent_text is not None:
            self.history.append({"role": "user", "content": agent_text})
        reply = await self.gateway.chat(self.history, prompt=USER_SIMULATOR, stage="user_sim", sample=self.sample)
        text = answer_text(reply.message)  # never the reasoning: a "###STOP###" it merely considered must not count
        self.usage = _add(self.usage, usage_of(getattr(reply, "usage", None)))
        self.history.append({"role": "assistant", "content": text})
        return text


def _add(a: TokenUsage, b: TokenUsage) -> TokenUsage:
    return TokenUsage(prompt_tokens=a.prompt_tokens + b.prompt_tokens,
                      completion_tokens=a.completion_tokens + b.completion_tokens)


class _Play:
    """The turn loop; its counters survive an exception so an aborted episode is still recorded."""

    def __init__(self) -> None:
        self.usage, self.steps, self.tool_errors, self.dropped_calls, self.unrun_calls = TokenUsage(), 0, 0, 0, 0
        self.termination: TerminationReason = "max_steps"
        self.error: str | None = None
        self.changes: ChangeLog | None = None  # every path a call changed, once the loaded state is known

    async def run(self, agent: Agent, user: _UserSim | None, ep: Episode, messages: list[dict[str, Any]],
                  tools: list[dict[str, Any]], max_steps: int, rules: CallRules) -> None:
        while self.steps < max_steps:
            turn: AgentTurn = await agent.step(messages, tools)
            self.steps += 1
            self.usage = _add(self.usage, turn.usage)
            msg = as_sent(normalise_assistant(turn.message, tools, self.steps), turn.message)  # any agent, any form
            if rules.rules == "envscaler":  # its runtime reads (and the trajectory keeps) the arguments as sent
                msg = with_sent_arguments(msg, turn.sent or turn.message)
            if rules.first_call_only and len(msg.get("tool_calls") or []) > 1:
                # EnvScaler's parse_action runs tool_calls[0]: record what ran, count what did not (refused
                # calls, so tool errors too: red team 9, F4)
                self.dropped_calls += len(msg["tool_calls"]) - 1
                self.tool_errors += len(msg["tool_calls"]) - 1
                msg = {**msg, "tool_calls": msg["tool_calls"][:1]}
            messages.append(msg)
            if msg.get("tool_calls"):
                for k, call in enumerate(msg["tool_calls"]):  # in order, each answered by exactly one tool message
                    chat = chat_of(call, rules.read_arguments)
                    if chat is not None and chat.kind == "ends":
                        if await self._chat(user, chat.content, messages, call["id"]):
                            self._not_run(messages, msg["tool_calls"][k + 1:], "the chat_with_user call before it")
                            return
                        continue
                    if chat is not None:
                        content, is_error = observed_json({"error": chat.why, "error_kind": "action"}), True
                        ends = None
                    else:
                        seen = await asyncio.to_thread(rules.run, ep, call)
                        content, is_error, ends = seen.content, seen.is_error, seen.ends
                        if seen.state is not None and self.changes is not None:
                            self.changes.saw(seen.state)
                    self.tool_errors += is_error
                    messages.append({"role": "tool", "tool_call_id": call["id"], "content": content})
                    if ends is not None:
                        self.termination, self.error = "tool_raised", ends
                        self._not_run(messages, msg["tool_calls"][k + 1:], "the call before it, which ended it")
                        return
                continue
            if rules.empty_reply_goes_on and not msg.get("content"):
                messages.append({"role": "user", "content": PARSE_FAILED})  # EnvScaler's parse_action, Case 4
                continue
            if user is None:
                self.termination = "agent_done"
                return
            reply = await user.say(answer_text(msg))
            if STOP_MARKER in reply:
                self.termination = "user_stop"
                return
            messages.append({"role": "user", "content": reply})

    async def _chat(self, user: _UserSim | None, content: Any, messages: list[dict[str, Any]], call_id: str) -> bool:
        """A `chat_with_user` call as EnvScaler's runtime takes it: it ends a non-conversational episode
        (`agent_done`); in a conversational one its content goes to the user, whose reply answers the call
        (and a ###STOP### in it ends the episode). True when the episode ended."""
        if user is None:
            messages.append({"role": "tool", "tool_call_id": call_id,
                             "content": observed_json({"type": "user", "content": "Task finished"})})
            self.termination = "agent_done"
            return True
        reply = await user.say(content if isinstance(content, str) else observed_json(content))
        messages.append({"role": "tool", "tool_call_id": call_id,
                         "content": observed_json({"type": "user", "content": reply})})
        if STOP_MARKER in reply:
            self.termination = "user_stop"
            return True
        return False

    def _not_run(self, messages: list[dict[str, Any]], calls: list[dict[str, Any]], at: str) -> None:
        """Answer the calls after the one that ended the episode (`at` names it): none of them ran. They are
        refused calls, so tool errors, and `unrun_calls` keeps such an episode out of SFT data: its row would
        show calls after the done signal (undoing the task) as if they were fine (red team 9, F4)."""
        for call in calls:
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": observed_json(
                {"error": f"not run: the episode ended at {at}", "error_kind": "action"})})
        self.tool_errors += len(calls)
        self.unrun_calls += len(calls)


async def run_rollout(
    env: AcceptedEnv, scenario: Scenario, runtime: EnvRuntime, gateway: Any, settings: Settings,
    *, sample: int = 0, agent: Agent | None = None,
) -> Trajectory:
    """Play one episode of `scenario` in mode `settings.rollout.mode` and score it with its checks."""
    cfg = settings.rollout
    conversational = cfg.mode == "conversational"
    prompt = AGENT_CONVERSATIONAL if conversational else AGENT_NON_CONVERSATIONAL
    if agent is None:
        agent = LLMAgent(gateway, prompt, settings.llm.models.agent, sample=sample)
    tools = [t.model_dump() for t in env.tools]
    user = _UserSim(gateway, scenario, sample) if conversational else None
    first = await user.say() if user else scenario.task
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": system_text(prompt, env)}, {"role": "user", "content": first},
    ]
    ep = await asyncio.to_thread(open_env_episode, runtime, env, scenario.initial_state)
    play = _Play()
    breach: str | None = None
    try:
        try:
            loaded_state = await asyncio.to_thread(lambda: ep.state)  # the checks' initial_state, as in EnvScaler
            play.changes = ChangeLog(loaded_state)
            try:
                await play.run(agent, user, ep, messages, tools, cfg.max_steps, CallRules(env))
            except LLMError as exc:
                if not _ends_episode(exc):
                    raise
                # What the agent did so far is still scored (visible; dropped by the filters, with the reason).
                play.termination, play.error = "error", str(exc)
            final_state = await asyncio.to_thread(lambda: ep.state)
        except EpisodeBreach as exc:  # its replies may be forged: a crashed episode, no state, no reward
            breach = f"the env's process forged replies, so the episode was not scored: {exc}"
    finally:
        await asyncio.to_thread(ep.close)
    usage, steps, tool_errors, termination = play.usage, play.steps, play.tool_errors, play.termination
    if user:
        usage = _add(usage, user.usage)
    if breach is not None:
        return Trajectory(
            scenario_fp=scenario.fingerprint, env_id=env.env_id, mode=cfg.mode, agent_model=agent.name, sample=sample,
            messages=messages, tools=env.tools, steps=steps, tool_errors=tool_errors, termination="error",
            initial_state=scenario.initial_state, final_state={}, check_results=[], reward=0.0, all_passed=False,
            usage=usage, error=breach, dropped_calls=play.dropped_calls, unrun_calls=play.unrun_calls,
        )
    outside: list[str] | None = None
    if scenario.footprint is not None and play.changes is not None:  # changes: every path a call changed
        play.changes.saw(final_state)
        footprint = await asyncio.to_thread(reference_footprint, env, scenario, runtime)  # recorded, or derived again
        outside = None if footprint is None else collateral(footprint, play.changes.paths)
    if termination == "tool_raised":  # EnvScaler's step: terminated, reward never computed (0.0)
        reward, all_passed, results = 0.0, False, []
    else:
        reward, all_passed, results = await asyncio.to_thread(
            score_checks, env, scenario, final_state, runtime, settings.scen.check_timeout_s, loaded_state
        )
    return Trajectory(
        scenario_fp=scenario.fingerprint, env_id=env.env_id, mode=cfg.mode, agent_model=agent.name, sample=sample,
        messages=messages, tools=env.tools, steps=steps, tool_errors=tool_errors, termination=termination,
        initial_state=scenario.initial_state, final_state=final_state, check_results=results,
        reward=reward, all_passed=all_passed, usage=usage, error=play.error, dropped_calls=play.dropped_calls,
        collateral_changes=None if outside is None else len(outside), collateral_paths=(outside or [])[:SHOWN_PATHS],
        unrun_calls=play.unrun_calls,
    )
