"""The LLM pass: the reference's dual-agent loop. A proposer LLM picks one call per round against one
live episode (state carries over), a judge LLM reviews code + args + return + state diff; contract
facts observed in the sandbox override the judge.

Unlike the reference, a round the proposer botched (unknown tool, schema-rejected args, no valid
answer) is counted as skipped, not silently dropped, and a judge that cannot answer falls back to the
facts. The episode is loaded from the test config like every other episode; after a timeout or crash
the sandbox episode rebuilds itself from that config and the last committed state.
"""

from __future__ import annotations

import asyncio
from typing import Any

from envscaler_core.models.env import EnvCandidate
from envscaler_core.models.validation import ValidationRound
from envscaler_core.prompts.validate import JUDGE_CALL, PROPOSE_CALL, JudgeInput, ProposeInput, ToolStats
from envscaler_core.runtime import CallOutcome, EnvRuntime
from envscaler_core.synth.tool_schema import class_header, method_sources, tool_lines
from envscaler_core.validation.facts import call_facts
from envscaler_core.validation.programmatic import observation, open_episode


class LLMPass:
    """`rounds` proposer/judge rounds over one episode loaded from `config`."""

    def __init__(self, candidate: EnvCandidate, runtime: EnvRuntime, gateway: Any, introduction: str,
                 rules: list[str], start: int, kinds: dict[str, str] | None = None) -> None:
        self.candidate, self.runtime, self.gateway = candidate, runtime, gateway
        self.introduction, self.rules, self.start = introduction, rules, start
        self.kinds = dict(candidate.tool_kinds) if kinds is None else kinds
        names = [t.function.name for t in candidate.tools]
        self.tools = set(names)
        # tool order, never set order: the stats are part of the prompt, and a prompt that differs
        # between processes (hash randomisation) would miss the response cache on resume
        self.stats: dict[str, ToolStats] = {name: ToolStats() for name in names}
        self.header = class_header(candidate.class_code, candidate.class_name)
        self.sources = method_sources(candidate.class_code, candidate.class_name)
        self.rounds: list[ValidationRound] = []
        self.skipped = 0

    async def run(self, config: dict[str, Any], n_rounds: int) -> None:
        from envscaler_core.llm.errors import LLMOutputInvalid

        ep = await asyncio.to_thread(open_episode, self.runtime, self.candidate, config)
        try:
            for i in range(n_rounds):
                before = ep.state
                try:
                    proposal = await self.gateway.structured(PROPOSE_CALL, ProposeInput(
                        introduction=self.introduction, tools=tool_lines(self.candidate.tools), stats=self.stats,
                        state=before, round=i + 1, rounds=n_rounds), stage="validate_proposer")
                except LLMOutputInvalid:
                    self.skipped += 1
                    continue
                if proposal.tool not in self.tools:
                    self.skipped += 1
                    continue
                out = await asyncio.to_thread(ep.call, proposal.tool, proposal.args)
                if not out.ok and out.error_kind == "schema":
                    self.skipped += 1
                    continue
                await self._judge(proposal, out, before)
        finally:
            await asyncio.to_thread(ep.close)

    async def _judge(self, proposal: Any, out: CallOutcome, before: dict[str, Any]) -> None:
        from envscaler_core.llm.errors import LLMOutputInvalid

        kind = self.kinds.get(proposal.tool)
        facts = call_facts(out, before, kind, proposal.case_type)
        try:
            judged = await self.gateway.structured(JUDGE_CALL, JudgeInput(
                introduction=self.introduction, rules=self.rules, class_header=self.header, tool=proposal.tool,
                tool_kind=kind, method_source=self.sources.get(proposal.tool, ""), args=proposal.args,
                case_type=proposal.case_type, observation=observation(out), state_before=before,
                state_after=out.state, state_diff=out.state_diff), stage="validate_judge")
            verdict, reason = judged.verdict, judged.reason
        except LLMOutputInvalid as exc:
            verdict, reason = facts.verdict, f"judge gave no valid verdict ({exc.reason}); facts: {facts.reason}"
        if facts.critical:
            verdict, reason = "fail", f"contract: {facts.reason}" + ("" if reason == "ok" else f" | judge: {reason}")
        self.rounds.append(ValidationRound(
            candidate_fp=self.candidate.fingerprint, mode="llm", index=self.start + len(self.rounds),
            tool=proposal.tool, args=proposal.args, case_type=proposal.case_type, observation=observation(out),
            error=None if out.ok else out.error, state_before=before, state_after=out.state,
            state_diff=out.state_diff, verdict=verdict, reason=reason, elapsed_ms=out.elapsed_ms,
        ))
        s = self.stats[proposal.tool]
        s.total += 1
        s.positive += proposal.case_type == "positive"
        s.negative += proposal.case_type == "negative"
        s.passes += verdict == "pass"
        s.warnings += verdict == "warning"
        s.fails += verdict == "fail"
