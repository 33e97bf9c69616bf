"""Stage 3: decide whether a candidate environment class is good enough to build scenarios on.

Two complementary passes, both executing the class in the sandbox (never in this process):

* programmatic: schema-driven probes (one positive, one negative call per tool), each from a fresh
  episode on the test state, plus a replay of every state-changing success to catch
  nondeterminism; verdicts come from contract facts alone, so this pass is cheap and reproducible;
* llm: the reference's dual-agent loop: a proposer LLM picks one call per round against the live
  episode (state carries over), a judge LLM reviews code + args + return + state diff.

Acceptance = score >= threshold AND no critical contract breach observed in either pass. Unlike the
reference, a round the proposer botched (unknown tool, schema-rejected args) is counted as skipped,
not silently dropped, a judge that cannot answer falls back to the facts, zero counted rounds means
"not accepted" rather than a ZeroDivisionError, and every loop is bounded.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

from pydantic import BaseModel, Field

from envscaler_core.config import Settings
from envscaler_core.models.env import AcceptedEnv, EnvCandidate
from envscaler_core.models.spec import EnvSpec
from envscaler_core.models.validation import ValidationReport, ValidationRound
from envscaler_core.prompts.validate import (
    JUDGE_CALL, PROPOSE_CALL, TEST_STATE, JudgeInput, ProposeInput, StateInput, ToolStats,
)
from envscaler_core.runtime import CallOutcome, EnvLoadError, EnvRuntime, Episode
from envscaler_core.synth.tool_schema import class_header, method_sources, state_attributes, tool_lines
from envscaler_core.validation.facts import call_facts, changed_paths
from envscaler_core.validation.probes import probes_for


class ValidationOutcome(BaseModel):
    """Everything Stage 3 learned about one candidate; the flow persists rounds and the env."""

    candidate_fp: str
    report: ValidationReport
    rounds: list[ValidationRound] = Field(default_factory=list)
    test_state: dict[str, Any] | None = None
    env: AcceptedEnv | None = None
    failure: str | None = Field(default=None, description="Why validation could not run at all.")


def observation(outcome: CallOutcome) -> Any:
    """What the judge (and the agent, later) sees of a call: the result, or the sandbox's error."""
    return outcome.result if outcome.ok else {"error": outcome.error, "error_kind": outcome.error_kind}


def _tool_dicts(candidate: EnvCandidate) -> list[dict[str, Any]]:
    return [t.model_dump() for t in candidate.tools]


def _open(runtime: EnvRuntime, candidate: EnvCandidate, state: dict[str, Any]) -> Episode:
    return runtime.open_episode(candidate.class_code, candidate.class_name, state, tools=_tool_dicts(candidate))


async def make_test_state(
    candidate: EnvCandidate, runtime: EnvRuntime, gateway: Any, introduction: str, attempts: int
) -> dict[str, Any]:
    """Ask for a test state until the sandbox loads it; the load error goes back as feedback."""
    feedback: str | None = None
    attributes = state_attributes(candidate.class_code, candidate.class_name)
    for _ in range(attempts):
        inp = StateInput(introduction=introduction, class_name=candidate.class_name,
                         class_code=candidate.class_code, state_attributes=attributes, feedback=feedback)
        out = await gateway.structured(TEST_STATE, inp, stage="validate_test_state")
        try:
            return await asyncio.to_thread(_load_state, runtime, candidate, out.state)
        except EnvLoadError as exc:
            feedback = f"The previous state did not load: {exc}"
    raise EnvLoadError(feedback or "no test state produced")


def _load_state(runtime: EnvRuntime, candidate: EnvCandidate, state: dict[str, Any]) -> dict[str, Any]:
    ep = _open(runtime, candidate, state)
    try:
        return ep.state
    finally:
        ep.close()


# ---- programmatic pass -------------------------------------------------------------------------

def _shape(before: dict[str, Any], after: dict[str, Any]) -> Counter[str]:
    """Which top-level attributes changed and how often: equal under harmless nondeterminism (new
    uuids, timestamps), different when a replay really did something else."""
    return Counter(p.split("/")[1] for p in changed_paths(before, after))


def run_programmatic(candidate: EnvCandidate, runtime: EnvRuntime, state: dict[str, Any], start: int = 0,
                     limit: int | None = None) -> list[ValidationRound]:
    """Up to `limit` probes, each from a fresh episode on the test state; state-changing successes
    are replayed once on another fresh episode to catch nondeterminism."""
    rounds: list[ValidationRound] = []
    for probe in probes_for(candidate.tools, state, limit):
        kind = candidate.tool_kinds.get(probe.tool)
        ep = _open(runtime, candidate, state)
        try:
            before = ep.state
            out = ep.call(probe.tool, probe.args)
        finally:
            ep.close()
        if not out.ok and out.error_kind == "schema":
            continue  # our own probe did not fit the schema: nothing learned about the env
        facts = call_facts(out, before, kind, probe.case_type)
        if out.ok and facts.success and facts.changed and not facts.critical:
            critical, warning = _replay(runtime, candidate, state, probe.tool, probe.args, out, before)
            facts.critical.extend(critical)
            facts.warnings.extend(warning)
        rounds.append(ValidationRound(
            candidate_fp=candidate.fingerprint, mode="programmatic", index=start + len(rounds), tool=probe.tool,
            args=probe.args, case_type=probe.case_type, check="contract", observation=observation(out),
            error=None if out.ok else out.error, state_before=before, state_after=out.state,
            state_diff=out.state_diff, verdict=facts.verdict, reason=facts.reason, elapsed_ms=out.elapsed_ms,
        ))
    return rounds


def _replay(runtime: EnvRuntime, candidate: EnvCandidate, state: dict[str, Any], tool: str,
            args: dict[str, Any], first: CallOutcome, before: dict[str, Any]) -> tuple[list[str], list[str]]:
    """(critical, warnings) from re-running a successful state change on a fresh copy of the state."""
    ep = _open(runtime, candidate, state)
    try:
        again = ep.call(tool, args)
    finally:
        ep.close()
    if not again.ok:
        return [f"replay of {tool} from the same state failed: {again.error_kind}"], []
    first_ok = isinstance(first.result, dict) and first.result.get("success")
    again_ok = isinstance(again.result, dict) and again.result.get("success")
    if first_ok != again_ok or _shape(before, first.state) != _shape(before, again.state):
        return [f"replay of {tool} from the same state behaved differently"], []
    if again.state != first.state or again.result != first.result:
        return [], [f"nondeterministic values in {tool} (same call, same state, different data)"]
    return [], []


# ---- LLM dual-agent pass -------------------------------------------------------------------------

class _LLMPass:
    """One live episode, `rounds` proposer/judge rounds; the episode is reopened after a kill."""

    def __init__(self, candidate: EnvCandidate, runtime: EnvRuntime, gateway: Any, introduction: str,
                 rules: list[str], start: int) -> None:
        self.candidate, self.runtime, self.gateway = candidate, runtime, gateway
        self.introduction, self.rules, self.start = introduction, rules, start
        names = [t.function.name for t in candidate.tools]
        self.tools = set(names)
        # tool order, never set order: the stats are part of the prompt, and a prompt that differs
        # between processes (hash randomisation) would miss the response cache on resume
        self.stats: dict[str, ToolStats] = {name: ToolStats() for name in names}
        self.header = class_header(candidate.class_code, candidate.class_name)
        self.sources = method_sources(candidate.class_code, candidate.class_name)
        self.rounds: list[ValidationRound] = []
        self.skipped = 0

    async def run(self, state: dict[str, Any], n_rounds: int) -> None:
        from envscaler_core.llm.errors import LLMOutputInvalid

        ep = await asyncio.to_thread(_open, self.runtime, self.candidate, state)
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
                if not out.ok and out.error_kind in ("timeout", "crash"):
                    ep.close()
                    ep = await asyncio.to_thread(_open, self.runtime, self.candidate, before)
        finally:
            ep.close()

    async def _judge(self, proposal: Any, out: CallOutcome, before: dict[str, Any]) -> None:
        from envscaler_core.llm.errors import LLMOutputInvalid

        kind = self.candidate.tool_kinds.get(proposal.tool)
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


# ---- verdict ---------------------------------------------------------------------------------

def summarize(rounds: list[ValidationRound], threshold: float, mode: str, skipped: int = 0) -> ValidationReport:
    """Score = (pass + warning) / counted rounds; a critical breach in any round vetoes acceptance."""
    verdicts = Counter(r.verdict for r in rounds)
    total = len(rounds)
    score = (verdicts["pass"] + verdicts["warning"]) / total if total else 0.0
    critical = sorted({r.reason for r in rounds if r.verdict == "fail" and _is_critical(r)})
    reasons = [reason for reason, _ in Counter(r.reason for r in rounds if r.verdict != "pass").most_common()]
    per_tool: dict[str, dict[str, int]] = {}
    for r in rounds:
        row = per_tool.setdefault(r.tool, {"total": 0, "pass": 0, "warning": 0, "fail": 0})
        row["total"] += 1
        row[r.verdict] += 1
    return ValidationReport(
        accepted=total > 0 and score >= threshold and not critical, score=round(score, 4), threshold=threshold,
        mode=mode, rounds=total, passes=verdicts["pass"], warnings=verdicts["warning"], fails=verdicts["fail"],
        skipped=skipped, critical=critical, reasons=reasons[:10], per_tool=per_tool,
    )


def _is_critical(r: ValidationRound) -> bool:
    """Programmatic fails are contract facts by construction; LLM-pass fails only when prefixed so."""
    return r.mode == "programmatic" or r.reason.startswith("contract:")


async def validate_candidate(
    candidate: EnvCandidate, runtime: EnvRuntime, gateway: Any, settings: Settings, *, spec: EnvSpec | None = None,
    test_state: dict[str, Any] | None = None,
) -> ValidationOutcome:
    """Run the configured passes and build the AcceptedEnv when the candidate earns it. A given
    `test_state` replaces the LLM-written one (it must still load).

    Infrastructure errors (LLM endpoint down, budget) propagate so the orchestrator can retry or stop;
    everything the candidate itself is responsible for ends in a report."""
    cfg = settings.validate_
    introduction = spec.introduction if spec else candidate.class_name
    rules = list(spec.rules) if spec else []
    empty = ValidationReport(accepted=False, score=0.0, threshold=cfg.threshold, mode=cfg.mode, rounds=0)
    if not candidate.tools:
        return ValidationOutcome(candidate_fp=candidate.fingerprint, report=empty, failure="the class exposes no tools")
    try:
        if test_state is not None:
            state = await asyncio.to_thread(_load_state, runtime, candidate, test_state)
        else:
            state = await make_test_state(candidate, runtime, gateway, introduction, settings.synth.step_attempts)
    except EnvLoadError as exc:
        return ValidationOutcome(candidate_fp=candidate.fingerprint, report=empty, failure=f"no loadable test state: {exc}")

    rounds: list[ValidationRound] = []
    skipped = 0
    if cfg.mode in ("programmatic", "both"):
        limit = max(cfg.rounds, 2 * len(candidate.tools))  # every tool gets a positive and a negative probe
        rounds += await asyncio.to_thread(run_programmatic, candidate, runtime, state, 0, limit)
    if cfg.mode in ("llm", "both"):
        llm_pass = _LLMPass(candidate, runtime, gateway, introduction, rules, start=len(rounds))
        await llm_pass.run(state, cfg.rounds)
        rounds += llm_pass.rounds
        skipped = llm_pass.skipped
    report = summarize(rounds, cfg.threshold, cfg.mode, skipped)
    env = _accepted_env(candidate, spec, report) if report.accepted else None
    return ValidationOutcome(candidate_fp=candidate.fingerprint, report=report, rounds=rounds, test_state=state, env=env)


def _accepted_env(candidate: EnvCandidate, spec: EnvSpec | None, report: ValidationReport) -> AcceptedEnv:
    return AcceptedEnv(
        env_id=f"env_{candidate.fingerprint[:12]}", candidate_fp=candidate.fingerprint,
        summary=spec.summary if spec else candidate.class_name,
        introduction=spec.introduction if spec else candidate.class_name,
        rules=list(spec.rules) if spec else [], class_name=candidate.class_name, class_code=candidate.class_code,
        tools=candidate.tools, tool_kinds=candidate.tool_kinds, score=report.score, validation_mode=report.mode,
    )
