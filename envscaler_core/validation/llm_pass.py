"""The LLM pass: the reference's dual-agent loop, as k independent chains. In each chain a proposer LLM
picks one call per round against one live episode (state carries over), a judge LLM reviews the call;
contract facts observed in the sandbox override the judge.

Chains: the rounds are split over `chains` episodes that all load the same test config and run at the
same time. Within a chain the judge of a round runs beside the proposal of the next one: the proposer
needs the state the call left and the calls made so far, not the verdict just asked for, so its
statistics count every call made and the verdicts of all rounds but the last (a fixed rule, so its
prompts stay the same on every run). A chain of r rounds is then r + 1 calls deep instead of 2 x r,
and the pass rounds / chains + 1 instead of 2 x rounds (the reference's 60). Each chain gets its
share of the tools as its focus (it tests them first, then whatever is least tested in its own
episode), so the chains spread over the tools instead of repeating each other. A chain sees only its
own episode and statistics: its prompts never depend on another chain's timing, so they are the same
on every run (the response cache serves a resumed pass) and cheap to cache.

Prompts carry the test state once, in their context, and then the changes since it (see
`models.changes`): the context is the same for every round of every chain, so providers' prefix caches
serve it. The judge sees the class without its tools in that context and the called tool's code first
in the varying part (`code_slices`), not the whole class on every round.

Unlike the reference, a round the proposer botched (unknown tool, schema-rejected args, no valid
answer) is counted as skipped, not silently dropped, and a judge that cannot answer falls back to the
facts. After a timeout or crash the sandbox episode rebuilds itself from the config and the last
committed state.
"""

from __future__ import annotations

import asyncio
from typing import Any

from envscaler_core.models.changes import state_changes
from envscaler_core.models.env import EnvCandidate
from envscaler_core.models.validation import ValidationRound
from envscaler_core.prompts.validate import JUDGE_CALL, PROPOSE_CALL, JudgeInput, ProposeInput, ToolStats
from envscaler_core.runtime import CallOutcome, EnvRuntime
from envscaler_core.validation.code_slices import CodeSlices
from envscaler_core.validation.facts import call_facts
from envscaler_core.validation.programmatic import observation, open_episode


def split_rounds(rounds: int, chains: int) -> list[int]:
    """Rounds per chain: as even as possible, earlier chains take the remainder; no empty chain."""
    chains = max(1, min(chains, rounds))
    return [rounds // chains + (i < rounds % chains) for i in range(chains)]


def chain_depth(rounds: int, chains: int) -> int:
    """LLM calls on the pass's critical path: a proposer per round of the longest chain, then its last
    judge (every other judge runs beside the next round's proposer)."""
    return max(split_rounds(rounds, chains)) + 1


class LLMPass:
    """`rounds` proposer/judge rounds over `chains` episodes loaded from `config`."""

    def __init__(self, candidate: EnvCandidate, runtime: EnvRuntime, gateway: Any, introduction: str,
                 rules: list[str], start: int, kinds: dict[str, str] | None = None) -> None:
        self.candidate, self.runtime, self.gateway = candidate, runtime, gateway
        self.introduction, self.rules, self.start = introduction, rules, start
        self.kinds = dict(candidate.tool_kinds) if kinds is None else kinds
        self.names = [t.function.name for t in candidate.tools]
        self.tool_schemas = [t.function.model_dump(mode="json", exclude_none=True) for t in candidate.tools]
        self.code = CodeSlices(candidate.class_code, candidate.class_name)
        self.rounds: list[ValidationRound] = []
        self.skipped = 0

    async def run(self, config: dict[str, Any], n_rounds: int, chains: int = 1) -> None:
        shares = split_rounds(n_rounds, chains)
        k = len(shares)
        results = await asyncio.gather(*(
            _Chain(self, config, index=j, of=k, rounds=share).run()
            for j, share in enumerate(shares)))
        for chain in results:  # chain order, then round order: indices never depend on timing
            self.skipped += chain.skipped
            for r in chain.rounds:
                self.rounds.append(r.model_copy(update={"index": self.start + len(self.rounds)}))


class _Chain:
    """One episode, its own tool statistics, `rounds` proposer/judge rounds."""

    def __init__(self, owner: LLMPass, config: dict[str, Any], index: int, of: int, rounds: int) -> None:
        self.owner, self.config, self.index, self.of, self.n_rounds = owner, config, index, of, rounds
        self.focus = owner.names[index::of] if of > 1 else []
        # tool order, never set order: the stats are part of the prompt, and a prompt that differs
        # between processes (hash randomisation) would miss the response cache on resume
        self.stats: dict[str, ToolStats] = {name: ToolStats() for name in owner.names}
        self.rounds: list[ValidationRound] = []
        self.skipped = 0

    async def run(self) -> _Chain:
        from envscaler_core.llm.errors import LLMOutputInvalid

        o = self.owner
        ep = await asyncio.to_thread(open_episode, o.runtime, o.candidate, self.config)
        judging: list[asyncio.Task[ValidationRound]] = []  # in round order, not yet counted
        try:
            initial = ep.state
            for i in range(self.n_rounds):
                while len(judging) > 1:  # every verdict but the last round's is counted before proposing
                    self._count_verdict(await judging.pop(0))
                before = ep.state
                changes = state_changes(initial, before)
                try:
                    proposal = await o.gateway.structured(PROPOSE_CALL, ProposeInput(
                        introduction=o.introduction, tool_schemas=o.tool_schemas,
                        initial_state=initial, chain=self.index, chains=self.of, focus=self.focus,
                        stats={name: s for name, s in self.stats.items() if s.total}, changes=changes,
                        round=i + 1, rounds=self.n_rounds), stage="validate_proposer")
                except LLMOutputInvalid:
                    self.skipped += 1
                    continue
                if proposal.tool not in self.stats:
                    self.skipped += 1
                    continue
                out = await asyncio.to_thread(ep.call, proposal.tool, proposal.args)
                if not out.ok and out.error_kind == "schema":
                    self.skipped += 1
                    continue
                self._count_call(proposal)
                judging.append(asyncio.ensure_future(self._judge(proposal, out, initial, before, changes)))
            while judging:
                self._count_verdict(await judging.pop(0))
        finally:
            for task in judging:  # only when the chain stops early (an error, a cancelled run)
                task.cancel()
            await asyncio.gather(*judging, return_exceptions=True)
            await asyncio.to_thread(ep.close)
        return self

    def _count_call(self, proposal: Any) -> None:
        s = self.stats[proposal.tool]
        s.total += 1
        s.positive += proposal.case_type == "positive"
        s.negative += proposal.case_type == "negative"

    def _count_verdict(self, judged: ValidationRound) -> None:
        self.rounds.append(judged.model_copy(update={"index": len(self.rounds)}))
        s = self.stats[judged.tool]
        s.passes += judged.verdict == "pass"
        s.warnings += judged.verdict == "warning"
        s.fails += judged.verdict == "fail"

    async def _judge(self, proposal: Any, out: CallOutcome, initial: dict[str, Any], before: dict[str, Any],
                     changes: list[dict[str, Any]]) -> ValidationRound:
        from envscaler_core.llm.errors import LLMOutputInvalid

        o = self.owner
        kind = o.kinds.get(proposal.tool)
        facts = call_facts(out, before, kind, proposal.case_type)
        try:
            judged = await o.gateway.structured(JUDGE_CALL, JudgeInput(
                introduction=o.introduction, rules=o.rules, class_context=o.code.shared, initial_state=initial,
                tool=proposal.tool, tool_kind=kind, tool_code=o.code.tool(proposal.tool), case_type=proposal.case_type,
                args=proposal.args,
                observation=observation(out), changes_before=changes,
                call_changes=state_changes(before, out.state)), stage="validate_judge")
            verdict, reason = judged.verdict, judged.reason
        except LLMOutputInvalid as exc:
            verdict, reason = facts.verdict, f"judge gave no valid verdict ({exc.reason}); facts: {facts.reason}"
        if facts.critical:
            verdict, reason = "fail", f"contract: {facts.reason}" + ("" if reason == "ok" else f" | judge: {reason}")
        return ValidationRound(
            candidate_fp=o.candidate.fingerprint, mode="llm", index=0,
            tool=proposal.tool, args=proposal.args, case_type=proposal.case_type, observation=observation(out),
            error=None if out.ok else out.error, state_before=before, state_after=out.state,
            state_diff=out.state_diff, verdict=verdict, reason=reason, elapsed_ms=out.elapsed_ms,
        )
