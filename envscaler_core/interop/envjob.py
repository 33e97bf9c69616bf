"""The audit of one imported env and its scenarios, in one thread with one harness session.

Order: load every scenario's initial state the way EnvScaler's runtime does (one batched sandbox
process); validate the class programmatically like one of our own candidates, on the first initial
state that loaded; then, for an accepted env only, run every check on its initial state (one batched
process) and replay the reference solutions that came with the files. A rejected env's scenarios are
`env_rejected` and cost no further work.
"""

from __future__ import annotations

import ast
import asyncio
import json
from typing import Any

from pydantic import BaseModel, Field

from envscaler_core.config import Settings
from envscaler_core.interop.batch import HarnessRunner
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
    state0: str | None = Field(default=None, description="Initial state as marker JSON (for --solve; not stored).")


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
        tree = ast.parse(env.code)
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
              runtime: EnvRuntime, settings: Settings, runner: HarnessRunner, static: list[str],
              keep_states: bool = False) -> EnvOutcome:
    """`static` = `static_problems(env)`, computed by the caller on its own thread; `keep_states`
    keeps the initial state of each unproven scenario for a later `--solve`."""
    from envscaler_core.interop.solutions import scenario_key

    items = [{"class_name": s.class_name, "config": s.config} for s in scenarios]
    loaded = runner.run("load_states", [*items, {"class_name": env.class_name, "config": None}], {"code": env.code})
    empty, loaded = loaded[-1], loaded[:-1]
    usable = [s.config for s, r in zip(scenarios, loaded) if "state" in r and s.class_name == env.class_name]
    # Our own sandbox sees markers as plain JSON (a set becomes a list), so prefer a config without any.
    test = next((c for c in usable if '"__type__"' not in json.dumps(c)), usable[0] if usable else None)
    load_error = None if test is not None or "state" in empty else str(empty.get("error"))
    outcome = judge_env(env, test, load_error, runtime, settings, static)
    if not outcome.accepted:
        why = f"env {env.env_id} rejected"
        outcome.scenarios = [ScenarioVerdict(audit="env_rejected", reasons=[why]) for _ in scenarios]
        return outcome
    verdicts: list[ScenarioVerdict] = []
    pending: list[int] = []
    for i, (s, r) in enumerate(zip(scenarios, loaded)):
        if "state" not in r:
            why = f"initial state does not load: {short(r.get('error'))}"
            checks = [CheckAudit(index=k, item=item, outcome="check_error", error=why) for k, (item, _) in enumerate(s.checks or [])]
            verdicts.append(ScenarioVerdict(audit="check_error", reasons=[why], checks=checks))
        elif s.checks is None:
            verdicts.append(ScenarioVerdict(audit="unproven", reasons=[SFT_NO_CHECKS]))
        else:
            verdicts.append(ScenarioVerdict(audit="check_error", state0=r["state"]))
            pending.append(i)
    raw = runner.run_checks([{"initial": verdicts[i].state0, "final": verdicts[i].state0,
                              "checks": [src for _, src in scenarios[i].checks or []]} for i in pending])
    for i, result in zip(pending, raw):
        audits = initial_audits([item for item, _ in scenarios[i].checks or []], result)
        cls, reasons = scenario_class(audits)
        keep = verdicts[i].state0 if cls == "unproven" else None  # what solving (and replays below) need
        verdicts[i] = verdicts[i].model_copy(update={"audit": cls, "reasons": reasons, "checks": audits, "state0": keep})
    todo = [(i, solutions[scenario_key(scenarios[i].record)]) for i in pending
            if verdicts[i].audit == "unproven" and scenario_key(scenarios[i].record) in solutions]
    for (i, calls), (audits, kept, problem) in zip(todo, verify(runner, env, [
            (scenarios[i], verdicts[i].state0 or "{}", verdicts[i].checks, calls) for i, calls in todo])):
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


def verify(runner: HarnessRunner, env: EnvInput,
           jobs: list[tuple[ScenarioInput, str, list[CheckAudit], list[ToolCall]]]
           ) -> list[tuple[list[CheckAudit], list[ToolCall], str | None]]:
    """Replay each candidate solution EnvScaler's way and judge the unproven checks on the result.

    A call EnvScaler would reject as invalid (no such attribute) or that raises (its runtime would end
    the episode with reward 0 there) is dropped and the rest replayed again from the initial state;
    the solution counts only if that second replay runs clean."""
    if not jobs:
        return []

    def replay(plans: list[tuple[ScenarioInput, list[ToolCall]]]) -> list[dict[str, Any]]:
        return runner.run("replay", [{"class_name": s.class_name, "config": s.config,
                                      "calls": [[c.tool, c.args] for c in calls]} for s, calls in plans],
                          {"code": env.code})

    first = replay([(s, calls) for s, _, _, calls in jobs])
    plans: list[list[ToolCall]] = []
    for (_, _, _, calls), result in zip(jobs, first):
        statuses = [c.get("status") for c in result.get("calls") or []]
        plans.append([c for c, st in zip(calls, statuses) if st == "ok"] if "state" in result else calls)
    second_idx = [k for k, (job, result) in enumerate(zip(jobs, first)) if "state" in result and len(plans[k]) != len(job[3])]
    finals = list(first)
    for k, result in zip(second_idx, replay([(jobs[k][0], plans[k]) for k in second_idx])):
        finals[k] = result
    problems: list[str | None] = []
    for k, result in enumerate(finals):
        bad = [c for c in result.get("calls") or [] if c.get("status") != "ok"]
        if "state" not in result:
            problems.append(f"the reference solution could not be replayed: {short(result.get('error'))}")
        elif bad:
            problems.append(f"the reference solution fails under EnvScaler's runtime: {short(bad[0].get('error') or 'invalid call')}")
        elif not plans[k]:
            problems.append("the reference solution has no call EnvScaler's runtime accepts")
        else:
            problems.append(None)
    ok = [k for k, p in enumerate(problems) if p is None]
    raw = runner.run_checks([{"initial": jobs[k][1], "final": finals[k]["state"],
                              "checks": [src for _, src in jobs[k][0].checks or []]} for k in ok])
    judged = dict(zip(ok, raw))
    return [(apply_solution(audits, judged[k]) if k in judged else audits, plans[k], problems[k])
            for k, (_, _, audits, _) in enumerate(jobs)]
