"""The audit of one imported env and its scenarios.

Order: load every scenario's initial state the way EnvScaler's runtime does (one sandbox episode
each); validate the class programmatically like one of our own candidates, on the first initial
state that loaded; then, for an accepted env only, run every check on its initial state (one
isolation unit per check) and replay the reference solutions that came with the files. A rejected
env's scenarios are `env_rejected` and cost no further work.
"""

from __future__ import annotations

import ast
import asyncio
from typing import Any

from pydantic import BaseModel, Field

from envscaler_core import pyast
from envscaler_core.config import Settings
from envscaler_core.interop.sandboxed import Breaker, has_markers, load_state, parallel, raw_result, replay, run_checks
from envscaler_core.interop.classify import SFT_NO_CHECKS, apply_solution, initial_audits, scenario_class, short
from envscaler_core.interop.read import EnvInput, ScenarioInput, env_execution_config
from envscaler_core.models.env import AcceptedEnv, EnvCandidate
from envscaler_core.models.interop import CheckAudit
from envscaler_core.models.scenario import ToolCall
from envscaler_core.models.validation import ValidationRound
from envscaler_core.runtime import EnvRuntime
from envscaler_core.validation import validate_candidate


class ScenarioVerdict(BaseModel):
    audit: str
    reasons: list[str] = Field(default_factory=list)
    checks: list[CheckAudit] = Field(default_factory=list)
    solution: list[ToolCall] = Field(default_factory=list)
    origin: str | None = None
    attempts: list[str] = Field(default_factory=list)
    state0: dict[str, Any] | None = Field(default=None, description="Initial state, marker JSON (for --solve; not stored).")


class EnvOutcome(BaseModel):
    env_id: str
    candidate: EnvCandidate
    accepted: bool
    reasons: list[str] = Field(default_factory=list)
    score: float = 0.0
    rounds: list[ValidationRound] = Field(default_factory=list)
    env: AcceptedEnv | None = None
    scenarios: list[ScenarioVerdict] = Field(default_factory=list, description="Aligned with the job's scenarios.")


def candidate_of(env: EnvInput) -> EnvCandidate:
    return EnvCandidate(topic_fp=f"envscaler:{env.env_id}", class_name=env.class_name, class_code=env.code,
                        tools=env.tools, tool_kinds=env.tool_kinds)  # type: ignore[arg-type]


def static_problems(env: EnvInput) -> list[str]:
    """What the source alone shows: it does not parse, or a tool has no method behind it (an agent
    calling it would only ever get an error, and probes would never notice).

    Call it from one thread at a time: CPython 3.11's `ast.parse` keeps its recursion counter in
    shared state and raises a spurious SystemError under concurrent use (python/cpython#106905)."""
    try:
        tree = pyast.parse(env.code)
    except SyntaxError as exc:
        return [f"env_class_code does not compile: {exc.msg} (line {exc.lineno})"]
    except (ValueError, RecursionError, MemoryError) as exc:
        return [f"env_class_code does not compile: {type(exc).__name__}: {exc}"]
    cls = next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == env.class_name), None)
    if cls is None:
        return []  # built some other way: the loader decides
    methods = {n.name for n in cls.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    attrs = {t.id for n in cls.body if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)}
    if any(isinstance(b, (ast.Name, ast.Attribute)) for b in cls.bases):
        return []  # inherited methods are invisible here
    return [f"tool {t.function.name!r} has no method in {env.class_name}" for t in env.tools
            if t.function.name not in methods | attrs]


def _programmatic(settings: Settings) -> Settings:
    return settings.model_copy(update={"validate_": settings.validate_.model_copy(update={"mode": "programmatic"})})


def judge_env(env: EnvInput, test_config: Any, load_error: str | None, runtime: EnvRuntime,
              settings: Settings, static: list[str]) -> EnvOutcome:
    candidate = candidate_of(env)
    reasons = list(static)
    if load_error is not None:
        reasons.append(f"does not load the way EnvScaler's runtime loads it: {short(load_error, 300)}")
    score, rounds = 0.0, []
    if not reasons:
        state = env_execution_config(test_config) if test_config is not None else {}
        outcome = asyncio.run(validate_candidate(candidate, runtime, None, _programmatic(settings), test_state=state))
        score, rounds = outcome.report.score, outcome.rounds
        if outcome.failure:
            reasons.append(outcome.failure)
        elif not outcome.report.accepted:
            reasons += outcome.report.critical or [
                f"validation score {outcome.report.score:g} below the threshold {outcome.report.threshold:g}"
                + (f" ({outcome.report.reasons[0]})" if outcome.report.reasons else "")]
    accepted = not reasons
    candidate = candidate.model_copy(update={"status": "accepted" if accepted else "rejected",
                                             "failure_reason": None if accepted else "; ".join(reasons)[:2000]})
    env_record = AcceptedEnv(
        env_id=env.env_id, candidate_fp=candidate.fingerprint, summary=env.summary or env.class_name,
        introduction=env.introduction, rules=env.rules, class_name=env.class_name, class_code=env.code,
        tools=env.tools, tool_kinds=env.tool_kinds, score=score, validation_mode="programmatic",  # type: ignore[arg-type]
    ) if accepted else None
    return EnvOutcome(env_id=env.env_id, candidate=candidate, accepted=accepted, reasons=reasons, score=score,
                      rounds=rounds, env=env_record)


def audit_env(env: EnvInput, scenarios: list[ScenarioInput], solutions: dict[str, list[ToolCall]],
              runtime: EnvRuntime, settings: Settings, static: list[str], keep_states: bool = False,
              threads: int = 1) -> EnvOutcome:
    """`static` = `static_problems(env)`, computed by the caller on its own thread; `keep_states`
    keeps the initial state of each unproven scenario for a later `--solve`. Every load is its own
    sandbox episode and every check its own unit; `threads` of them run at once."""
    from envscaler_core.interop.solutions import scenario_key

    breaker = Breaker(settings.scen.check_timeout_s)
    loaded = parallel(lambda s: load_state(runtime, env.code, s.class_name, s.config, breaker), scenarios, threads)
    usable = [s.config for s, r in zip(scenarios, loaded) if r.state is not None and s.class_name == env.class_name]
    # Our own sandbox sees markers as plain JSON (a set becomes a list), so prefer a config without any.
    test = next((c for c in usable if not has_markers(c)), usable[0] if usable else None)
    load_error = None
    if test is None:
        empty = load_state(runtime, env.code, env.class_name, None, breaker)
        load_error = empty.error
    outcome = judge_env(env, test, load_error, runtime, settings, static)
    if not outcome.accepted:
        why = f"env {env.env_id} rejected"
        outcome.scenarios = [ScenarioVerdict(audit="env_rejected", reasons=[why]) for _ in scenarios]
        return outcome
    verdicts: list[ScenarioVerdict] = []
    pending: list[int] = []
    for i, (s, r) in enumerate(zip(scenarios, loaded)):
        if r.state is None:
            why = f"initial state does not load: {short(r.error)}"
            checks = [CheckAudit(index=k, item=item, outcome="check_error", error=why) for k, (item, _) in enumerate(s.checks or [])]
            verdicts.append(ScenarioVerdict(audit="check_error", reasons=[why], checks=checks))
        elif s.checks is None:
            verdicts.append(ScenarioVerdict(audit="unproven", reasons=[SFT_NO_CHECKS]))
        else:
            verdicts.append(ScenarioVerdict(audit="check_error", state0=r.state))
            pending.append(i)

    def initial(i: int) -> list[dict[str, Any]]:
        state = verdicts[i].state0 or {}
        return [raw_result(o) for o in run_checks(runtime, [src for _, src in scenarios[i].checks or []], state, state, breaker)]

    for i, result in zip(pending, parallel(initial, pending, threads)):
        audits = initial_audits([item for item, _ in scenarios[i].checks or []], result)
        cls, reasons = scenario_class(audits)
        keep = verdicts[i].state0 if cls == "unproven" else None  # what solving (and replays below) need
        verdicts[i] = verdicts[i].model_copy(update={"audit": cls, "reasons": reasons, "checks": audits, "state0": keep})
    todo = [(i, solutions[scenario_key(scenarios[i].record)]) for i in pending
            if verdicts[i].audit == "unproven" and scenario_key(scenarios[i].record) in solutions]
    for (i, calls), (audits, kept, problem) in zip(todo, verify(runtime, env, [
            (scenarios[i], verdicts[i].state0 or {}, verdicts[i].checks, calls) for i, calls in todo], breaker, threads)):
        verdicts[i] = settle(verdicts[i], audits, kept, problem, "file")
    outcome.scenarios = verdicts if keep_states else [v.model_copy(update={"state0": None}) for v in verdicts]
    return outcome


def settle(verdict: ScenarioVerdict, audits: list[CheckAudit], kept: list[ToolCall], problem: str | None,
           origin: str) -> ScenarioVerdict:
    """Fold one verification attempt into the verdict. Only success changes the class: a failed
    attempt is not a reference solution, so the scenario stays as it was and the attempt is noted
    (apart from the audit's reasons, which describe the scenario, so they survive export/import)."""
    cls, _ = scenario_class(audits)
    if problem is None and cls == "verified":
        return verdict.model_copy(update={"audit": cls, "reasons": [], "checks": audits, "solution": kept,
                                          "origin": origin})
    who = "the agent's solution" if origin == "agent" else "the reference solution"
    if problem is None:
        broken = next((a for a in audits if a.outcome in ("check_error", "not_bool")), None)
        problem = f"{who} leaves a check False" if broken is None else f"after {who}: {short(broken.error)}"
    return verdict.model_copy(update={"attempts": [*verdict.attempts, f"{origin}: {problem}"]})


def verify(runtime: EnvRuntime, env: EnvInput,
           jobs: list[tuple[ScenarioInput, dict[str, Any], list[CheckAudit], list[ToolCall]]],
           breaker: Breaker, threads: int = 1) -> list[tuple[list[CheckAudit], list[ToolCall], str | None]]:
    """Replay each candidate solution EnvScaler's way (one sandbox episode each) and judge the
    unproven checks on the result (one unit per check).

    A call EnvScaler would reject as invalid (no such attribute) or that raises (its runtime would end
    the episode with reward 0 there) is dropped and the rest replayed again from the initial state;
    the solution counts only if that second replay runs clean."""
    if not jobs:
        return []

    def one(job: tuple[ScenarioInput, dict[str, Any], list[CheckAudit], list[ToolCall]]
            ) -> tuple[list[CheckAudit], list[ToolCall], str | None]:
        s, state0, audits, calls = job
        result = replay(runtime, env.code, s.class_name, s.config, calls, breaker)
        plan = [c for c, st in zip(calls, result.statuses) if st == "ok"] if result.state is not None else calls
        if result.state is not None and len(plan) != len(calls):
            result = replay(runtime, env.code, s.class_name, s.config, plan, breaker)
        bad = next((e or "invalid call" for st, e in zip(result.statuses, result.errors) if st != "ok"), None)
        if result.state is None:
            return audits, plan, f"the reference solution could not be replayed: {short(result.error)}"
        if bad is not None:
            return audits, plan, f"the reference solution fails under EnvScaler's runtime: {short(bad)}"
        if not plan:
            return audits, plan, "the reference solution has no call EnvScaler's runtime accepts"
        outcomes = run_checks(runtime, [src for _, src in s.checks or []], state0, result.state, breaker)
        return apply_solution(audits, [raw_result(o) for o in outcomes]), plan, None

    return parallel(one, jobs, threads)
