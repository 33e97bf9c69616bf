"""The audit of one imported env and its scenarios.

Order: load the class with an empty config (the env on its own: a class the sandbox must kill there
is rejected and costs no more), then every scenario of the env's own class the way EnvScaler's
runtime does (one sandbox episode each); validate the class programmatically like one of our own
candidates, on each of a few of the loaded initial states chosen by content (a contract breach on
any of them rejects it; else one that passes accepts it, so neither file order nor one scenario's data
that leaves a tool unreached decides the env); then, for an accepted env only,
run every check on its initial state (one isolation unit per check) and replay the reference
solutions that came with the files. A rejected env's scenarios are `env_rejected` and cost no more.
"""

from __future__ import annotations

import ast
import asyncio
from typing import Any

from pydantic import BaseModel, Field

from envscaler_core import pyast
from envscaler_core.config import Settings
from envscaler_core.interop.replay_audit import verify
from envscaler_core.interop.sandboxed import (
    Breaker, Loaded, has_markers, load_state, parallel, raw_result, run_checks, with_markers_restored,
)
from envscaler_core.interop.classify import SFT_NO_CHECKS, initial_audits, rejudged, scenario_class, short
from envscaler_core.interop.read import EnvInput, ScenarioInput
from envscaler_core.interop.strict_json import safe
from envscaler_core.models.base import fingerprint_of
from envscaler_core.models.env import AcceptedEnv, EnvCandidate
from envscaler_core.models.interop import CheckAudit
from envscaler_core.models.scenario import ToolCall
from envscaler_core.models.validation import ValidationRound
from envscaler_core.rollout.rules import class_attribute_kinds, no_method_tools
from envscaler_core.runtime import EnvRuntime, load_failure
from envscaler_core.synth.static_checks import MAX_TOOLS, check_sandbox_hooks
from envscaler_core.synth.tool_schema import method_sources
from envscaler_core.validation import validate_candidate
from envscaler_core.validation.report import summarize
from envscaler_core.validation.state_sweep import labels, sweep_breaches


class ScenarioVerdict(BaseModel):
    audit: str
    reasons: list[str] = Field(default_factory=list)
    checks: list[CheckAudit] = Field(default_factory=list)
    solution: list[ToolCall] = Field(default_factory=list)
    origin: str | None = None
    attempts: list[str] = Field(default_factory=list)
    state0: dict[str, Any] | None = Field(default=None, description="Initial state, marker JSON (for --solve; not stored).")
    lost: list[str] = Field(default_factory=list, description=(
        "What of the state after the verifying solution the factory's plain JSON cannot keep "
        "(`sandboxed.lost_when_flattened`; not stored): named when the scenario is not promoted."))


class EnvOutcome(BaseModel):
    env_id: str
    candidate: EnvCandidate
    accepted: bool
    reasons: list[str] = Field(default_factory=list)
    score: float = 0.0
    rounds: list[ValidationRound] = Field(default_factory=list)
    env: AcceptedEnv | None = None
    scenarios: list[ScenarioVerdict] = Field(default_factory=list, description="Aligned with the job's scenarios.")
    notes: list[str] = Field(default_factory=list, description="What the verdict rests on, when that is less than usual.")
    breaches: list[str] = Field(default_factory=list, description=(
        "The contract breaches (validation's critical facts) its state showed: they reject the env whatever "
        "another state shows."))
    validated_on: list[str] = Field(default_factory=list, description=(
        "Fingerprints of the validation states (`validation_state`) the verdict was reached on."))


def candidate_of(env: EnvInput) -> EnvCandidate:
    return EnvCandidate(topic_fp=f"envscaler:{env.env_id}", class_name=env.class_name, class_code=env.code,
                        tools=env.tools, tool_kinds=env.tool_kinds)  # type: ignore[arg-type]


def validated_tools(candidate: EnvCandidate) -> EnvCandidate:
    """The candidate validation probes: without the tools that are a property or class constant of the class
    whose value is not callable (`no_method_tools`; an alias, a lambda or a getter returning a callable is
    probed like a method, so a getter that writes state is caught: outside check 11, B-F3). They stay offered (EnvScaler offers them), but no call to one can succeed in either
    runtime, so demanding a successful call to one rejected the env on coverage ("loan_count was never called") where
    EnvScaler scores its scenarios 1.0 (outside check 10, C-F1)."""
    names = no_method_tools(candidate.class_code, candidate.class_name, [t.function.name for t in candidate.tools])
    if not names:
        return candidate
    kinds = {k: v for k, v in candidate.tool_kinds.items() if k not in names}
    return candidate.model_copy(update={"tools": [t for t in candidate.tools if t.function.name not in names],
                                        "tool_kinds": kinds})


def static_problems(env: EnvInput) -> list[str]:
    """What the source alone shows: it does not parse, a tool's schema cannot be fitted to its method
    (tool_fit: no call could run it), or a tool has no method behind it (an agent calling it would only
    ever get an error, and probes would never notice).

    Call it from one thread at a time: CPython 3.11's `ast.parse` keeps its recursion counter in
    shared state and raises a spurious SystemError under concurrent use (python/cpython#106905)."""
    try:
        tree = pyast.parse(env.code)
    except (pyast.SourceTooLarge, pyast.NestedTooDeep) as exc:
        return [f"env_class_code is refused: {exc.msg}"]
    except SyntaxError as exc:
        return [f"env_class_code does not compile: {exc.msg} (line {exc.lineno})"]
    except (ValueError, RecursionError, MemoryError) as exc:
        return [f"env_class_code does not compile: {type(exc).__name__}: {exc}"]
    hooks = [f"env_class_code: {p}" for p in check_sandbox_hooks(tree)]  # only our own adapters may use them
    if hooks:
        return hooks
    if env.tool_problems:  # a tool no call can run: probes would only report it as never called
        return list(env.tool_problems)
    if len(env.tools) > MAX_TOOLS:  # each tool is probed: the host's work grows with their number
        return [f"{len(env.tools)} tools, more than the {MAX_TOOLS} a class may have (synth.static_checks.MAX_TOOLS)"]
    cls = next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == env.class_name), None)
    if cls is None:
        return []  # built some other way: the loader decides
    methods = {n.name for n in cls.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    attrs = set(class_attribute_kinds(env.code, env.class_name))  # offered as EnvScaler offers them (tool_fit)
    if any(isinstance(b, (ast.Name, ast.Attribute)) for b in cls.bases):
        return []  # inherited methods are invisible here
    return [f"tool {t.function.name!r} has no method in {env.class_name}" for t in env.tools
            if t.function.name not in methods | attrs]


def _programmatic(settings: Settings) -> Settings:
    return settings.model_copy(update={"validate_": settings.validate_.model_copy(update={"mode": "programmatic"})})


MAX_TEST_STATES = 3
"""Scenario initial states an env is validated on (a breach on any rejects it; else one that passes accepts it)."""
FOREIGN_CLASS = ("env_class_name {name!r} is not its env's class {env!r}: a scenario runs only against the class "
                 "validated for its env (EnvScaler's generator asserts they match)")
NOT_LOADED = "no scenario's initial state loaded"
STRICTER_CONTRACT = (
    "how to adapt the class: a query, or a call that reports failure, must leave the state as it was. This is "
    "the factory's contract, which its data depends on (probes, replays and rewards compare states), and it is "
    "stricter than EnvScaler's own stage 3, where an LLM judges the class and its runtime rewards such a class; "
    "keep bookkeeping a query or a refused call writes (an access log, an audit trail, a cache, a last-queried "
    "timestamp, a record created on first read with setdefault, a failed-attempts counter) in `_private` "
    "attributes, which the state leaves out (docs/validation.md, 'Queries and refusals change nothing')")
_STATE_CHANGE_BREACHES = (" changed state", "changed state later on")
UNCARRIED_STATE = ("loads, but its state holds a value JSON with EnvScaler's type markers cannot carry (EnvScaler's "
                   "runtime keeps the instance in memory; our sandbox returns the state as JSON: sets, tuples, "
                   "datetimes, Decimals and inf/nan are carried, other objects are not)")
NO_SCENARIO = "the files give it no scenario"
STATE_ADVICE = "; give a state where it can succeed"
IMPORT_ADVICE = ("; give a scenario whose state lets it succeed and a reference solution that calls it there "
                 "(validation tries the solutions' calls as probes)")
"""An imported env's coverage advice: its own probes may not find arguments the class accepts (a key only its
code allows), and the reference solutions' calls are tried too, so saying only "a state" was false advice
when the state already allowed the call (rt22-R13, F1)."""
EMPTY_STATE_REASON = "validated on an empty state, since {why}: "
EMPTY_STATE_NOTE = "validated on an empty state only ({why}), so these tools never got past their guards: {tools}"


def judge_env(env: EnvInput, test_config: Any, load_error: str | None, runtime: EnvRuntime,
              settings: Settings, static: list[str], *, on_empty: bool = False, empty_why: str = NOT_LOADED,
              hints: dict[str, list[dict[str, Any]]] | None = None) -> EnvOutcome:
    """Validate the class programmatically on one test state. `on_empty`: no scenario's initial state
    was usable, so the state is empty; tools that can only fail on an empty state (nothing to find)
    then show that the files gave no data, not that the class is wrong, so coverage gaps do not
    reject it there (contract breaches still do) and the gap is noted instead. `hints`: the reference
    solutions' calls per tool (`solution_hints`), tried as probes."""
    candidate = candidate_of(env)
    reasons = list(static)
    notes: list[str] = []
    if load_error is not None and "not JSON-serialisable" in load_error:
        reasons.append(f"{UNCARRIED_STATE}: {short(load_error, 300)}")
    elif load_error is not None:
        reasons.append(f"does not load the way EnvScaler's runtime loads it: {short(load_error, 300)}")
    score, rounds, breaches = 0.0, [], []
    if not reasons:
        # always the faithful form: markers in the config reach the class restored, and what the class
        # makes itself (`self.vip = set()`) comes back as a marker, whatever the state holds (F4)
        probed, state = with_markers_restored(
            validated_tools(candidate), test_config if test_config is not None else {}, always=True)
        outcome = asyncio.run(validate_candidate(probed, runtime, None, _programmatic(settings), test_state=state,
                                                 hints=hints, any_result=True))
        score, report = outcome.report.score, outcome.report
        breaches = list(report.critical)
        rounds = [r.model_copy(update={"candidate_fp": candidate.fingerprint}) for r in outcome.rounds]  # the
        # env's own candidate, not the marker-adapted copy the probes ran
        if outcome.failure:
            reasons.append(outcome.failure)
        elif not report.accepted:
            lenient = summarize(rounds, report.threshold, report.mode) if on_empty and not report.critical else None
            # on an empty state every tool may only refuse (nothing to find): no counted round is no failure
            if lenient is not None and (lenient.accepted or lenient.rounds == 0):
                kinds = candidate.tool_kinds
                notes.append(EMPTY_STATE_NOTE.format(why=empty_why, tools=", ".join(
                    f"{t} ({kinds[t].replace('_', ' ')})" if t in kinds else t for t in report.unreached) or "none"))
            elif report.critical or report.blocking:
                reasons += report.critical or [line.replace(STATE_ADVICE, IMPORT_ADVICE) for line in report.blocking]
            else:
                reasons.append(f"validation score {report.score:g} below the threshold {report.threshold:g}"
                               + (f" ({report.reasons[0]})" if report.reasons else ""))
                if on_empty:
                    reasons = [EMPTY_STATE_REASON.format(why=empty_why) + r for r in reasons]
    if any(any(b in r for b in _STATE_CHANGE_BREACHES) and "accepted invalid arguments" not in r for r in reasons):
        reasons.append(STRICTER_CONTRACT)
    accepted = not reasons
    candidate = candidate.model_copy(update={"status": "accepted" if accepted else "rejected",
                                             "failure_reason": None if accepted else "; ".join(reasons)[:2000]})
    env_record = AcceptedEnv(
        env_id=env.env_id, candidate_fp=candidate.fingerprint, summary=env.summary or env.class_name,
        introduction=env.introduction, rules=env.rules, class_name=env.class_name, class_code=env.code,
        tools=env.tools, tool_kinds=env.tool_kinds, score=score, validation_mode="programmatic",  # type: ignore[arg-type]
        episode_rules="envscaler",  # its episodes play EnvScaler's runtime's rules (rollout/rules.py)
    ) if accepted else None
    return EnvOutcome(env_id=env.env_id, candidate=candidate, accepted=accepted, reasons=reasons, score=score,
                      rounds=rounds, env=env_record, notes=notes, breaches=breaches)


def method_names(env: EnvInput) -> set[str]:
    """Its tools' names and every method its class defines: names a config key must not be validated with."""
    try:
        return {t.function.name for t in env.tools} | set(method_sources(env.code, env.class_name))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return {t.function.name for t in env.tools}


def validation_state(config: Any, methods: set[str]) -> Any:
    """The config a class is validated on: without the top-level keys named like one of its `methods`.
    EnvScaler's loader sets such a key over the method (`{"renew": 7}`, `{"_find": "nope"}`), so there
    the tool cannot be called, and the tools calling the helper raise: that judges the scenario's data (its
    own verification shows it), not the class; the rest of its data is what the class must keep its
    contract on (differential round 3 F4 rejected an env, "renew was never called"; the fix, leaving such
    states out, let a key in every scenario spare the env validation on its data, rt10-B F4, and a helper
    key in one scenario reject it, rt10-C F4)."""
    return {k: v for k, v in config.items() if k not in methods} if isinstance(config, dict) else config


def test_states(configs: list[Any], limit: int | None = MAX_TEST_STATES) -> list[Any]:
    """Distinct loaded configs in an order that depends on their content only, never on file order
    (marker-free first: our own sandbox sees markers as plain JSON), at most `limit`."""
    distinct = {fingerprint_of(c): c for c in configs}
    ranked = sorted(distinct.items(), key=lambda kv: (has_markers(kv[1]), kv[0]))
    return [c for _, c in ranked[:limit]]


def solution_hints(plans: list[list[ToolCall]]) -> dict[str, list[dict[str, Any]]]:
    """Per tool, the arguments the env's reference solutions call it with. EnvScaler's runtime runs those calls,
    so they are evidence the tool can succeed, and validation tries them as probes: a class accepting only the
    keys its code allows, or a TypedDict key naming a record, was rejected on coverage ("give a state where it
    can succeed") while the scenario's state allowed the call and its solution made it (rt22-R13, F1)."""
    out: dict[str, list[dict[str, Any]]] = {}
    for plan in plans:
        for call in plan:
            if call.args not in out.setdefault(call.tool, []):
                out[call.tool].append(call.args)
    return out


def judge_on_its_own(env: EnvInput, configs: list[Any], own: Loaded, runtime: EnvRuntime, settings: Settings,
                     static: list[str], had_scenarios: bool = True,
                     hints: dict[str, list[dict[str, Any]]] | None = None) -> EnvOutcome:
    """The env's verdict from its own class, validated on each of a few scenario initial states (chosen
    by content): a contract breach on any of them rejects it (the attacker writes the scenario file too:
    when the first state that passed accepted the env, a decoy scenario whose state never reached the
    defect got it accepted, sandbox red team 8, F3); otherwise it is accepted if it passes on one of
    them, so one scenario's data that leaves a tool unreached cannot reject it. With no loadable
    scenario state, on an empty state (`judge_env(on_empty=True)`). `hints`: `solution_hints`, tried as probes."""
    if static or own.killed:
        return judge_env(env, None, own.error if own.killed else None, runtime, settings, static)
    methods = method_names(env)
    states = test_states([validation_state(c, methods) for c in configs])
    if not states:
        why = NOT_LOADED if had_scenarios else NO_SCENARIO
        return judge_env(env, None, own.error, runtime, settings, static, on_empty=True, empty_why=why, hints=hints)
    outcomes: list[EnvOutcome] = []
    for k, config in enumerate(states):
        outcome = judge_env(env, config, None, runtime, settings, static, hints=hints)
        outcome.validated_on = [fingerprint_of(c) for c in states]
        if outcome.breaches:  # a broken class stays broken, whatever the other states show
            if len(states) > 1:
                outcome.notes.append(f"rejected for a contract breach on scenario initial state {k + 1} of the "
                                     f"{len(states)} it is validated on (a breach on any of them rejects it)")
            return outcome
        outcomes.append(outcome)
    passed = next((o for o in outcomes if o.accepted), None)
    if passed is not None:
        return passed
    first = outcomes[0]
    if len(states) > 1:
        first.notes.append(f"rejected on each of the {len(states)} scenario initial states it was validated on "
                           "(the reasons are the first state's)")
    return first


def audit_env(env: EnvInput, scenarios: list[ScenarioInput], solutions: dict[str, list[ToolCall]],
              runtime: EnvRuntime, settings: Settings, static: list[str], keep_states: bool = False,
              threads: int = 1) -> EnvOutcome:
    """`static` = `static_problems(env)`, computed by the caller on its own thread; `keep_states`
    keeps the initial state of each unproven scenario for a later `--solve`. Every load is its own
    sandbox episode and every check its own unit; `threads` of them run at once.

    Nothing of one scenario decides another's verdict: the env is judged on its own (its load with an
    empty config, validation on states chosen by content), each scenario has its own kill/timeout
    bookkeeping, and a scenario naming another class than its env's is not run at all."""
    from envscaler_core.interop.solutions import scenario_key

    timeout, repeats = settings.scen.check_timeout_s, settings.scen.check_repeats
    own = load_state(runtime, env.code, env.class_name, None, Breaker(timeout))
    if own.killed:
        own = own.model_copy(update={"error": f"the sandbox killed it on an empty config: {short(own.error, 250)}"})
    doomed = bool(static) or own.killed
    ours = [i for i, s in enumerate(scenarios) if s.class_name == env.class_name and not doomed]
    loads = parallel(lambda i: load_state(runtime, env.code, env.class_name, scenarios[i].config, Breaker(timeout)),
                     ours, threads)
    loaded: dict[int, Loaded] = dict(zip(ours, loads))
    outcome = judge_on_its_own(env, [scenarios[i].config for i, r in loaded.items() if r.state is not None],
                               own, runtime, settings, static, had_scenarios=bool(ours),
                               hints=solution_hints([solutions.get(scenario_key(scenarios[i].record), []) for i in ours]))

    def first_verdicts(accepted: bool) -> tuple[list[ScenarioVerdict], list[int]]:
        verdicts: list[ScenarioVerdict] = []
        pending: list[int] = []
        for i, s in enumerate(scenarios):
            r = loaded.get(i)
            own_problem = (FOREIGN_CLASS.format(name=s.class_name, env=env.class_name) if s.class_name != env.class_name
                           else load_failure(short(r.error))
                           if r is not None and r.state is None and (accepted or own.state is not None)
                           else None)
            if own_problem is not None:  # the scenario's own problem, whatever its env's verdict (when the env
                # itself loads: a class that loads with no config at all cannot blame its loads on the class)
                checks = [CheckAudit(index=k, item=item, outcome="check_error", error=own_problem)
                          for k, (item, _) in enumerate(s.checks or [])]
                verdicts.append(ScenarioVerdict(audit="check_error", reasons=[own_problem], checks=checks))
            elif not accepted or r is None:
                verdicts.append(ScenarioVerdict(audit="env_rejected", reasons=[f"env {env.env_id} rejected"]))
            elif s.checks is None:
                verdicts.append(ScenarioVerdict(audit="unproven", reasons=[SFT_NO_CHECKS]))
            else:
                verdicts.append(ScenarioVerdict(audit="check_error", state0=r.state))
                pending.append(i)
        return verdicts, pending

    verdicts, pending = first_verdicts(outcome.accepted)

    def initial(i: int) -> list[dict[str, Any]]:
        state = verdicts[i].state0 or {}
        sources = [src for _, src in scenarios[i].checks or []]
        return [raw_result(o) for o in run_checks(runtime, sources, state, state, Breaker(timeout), repeats)]

    if not outcome.accepted:
        outcome.scenarios = verdicts
        return outcome
    for i, result in zip(pending, parallel(initial, pending, threads)):
        audits = initial_audits([item for item, _ in scenarios[i].checks or []], result)
        cls, reasons = scenario_class(audits)
        keep = verdicts[i].state0 if _replayable(cls, audits) else None  # what solving and replays below need
        verdicts[i] = verdicts[i].model_copy(update={"audit": cls, "reasons": reasons, "checks": audits, "state0": keep})
    todo = [(i, solutions[scenario_key(scenarios[i].record)]) for i in pending
            if _replayable(verdicts[i].audit, verdicts[i].checks) and scenario_key(scenarios[i].record) in solutions]
    for (i, calls), (audits, kept, problem, lost) in zip(todo, verify(runtime, env, [
            (scenarios[i], verdicts[i].state0 or {}, verdicts[i].checks, calls) for i, calls in todo], timeout, threads,
            repeats)):
        verdicts[i] = settle(verdicts[i], audits, kept, problem, "file", lost)
    promotable = [i for i, v in enumerate(verdicts) if v.audit == "verified" or (
        keep_states and scenarios[i].split == "rl" and v.audit == "unproven")]  # --solve may verify these
    broken = breach_on_promotable(env, [scenarios[i] for i in promotable], outcome, runtime, settings, threads)
    if broken is not None:
        outcome, (verdicts, _) = broken, first_verdicts(False)
    outcome.scenarios = verdicts if keep_states else [v.model_copy(update={"state0": None}) for v in verdicts]
    return outcome


PROMOTABLE_BREACH = ("on the initial state of scenario {task}, one of {n} state(s) of scenarios that would be "
                     "promoted checked besides the {k} it was validated on: {breach}")


def breach_on_promotable(env: EnvInput, promotable: list[ScenarioInput], accepted: EnvOutcome, runtime: EnvRuntime,
                         settings: Settings, threads: int) -> EnvOutcome | None:
    """The env rejected for the contract breaches of the first (by content) initial state of a scenario
    that would be promoted, among those it was not validated on, that shows any; None when none does.
    Such a state is played by the gym, MCP, rollouts and the RL export, so a breach there is a broken
    class whatever the other states show: the attacker writes the scenario file, and decoys whose states
    sort first hid the one state that reached the defect (rt10-B F2). Coverage was earned on the states it
    was validated on, so each further state gets only the breach sweep (`state_sweep`: the programmatic
    pass's planned calls in one episode: 20 scenarios of a 13-tool env took 33 s to import, not 26, where
    the full pass on each state took 61; docs/interop.md). Each state is swept as it is served, config keys
    named like a method included (`validation_state` leaves them out of validation only): a constructor
    reading `"_audit" in init_config` armed a defect in the served state alone, and the gym paid 1.0 for a
    lone query (rt11-B F1); a state holding such a key was not validated as it is, so it is always swept."""
    methods = method_names(env)
    states = {fingerprint_of(s.config): (s, s.config) for s in promotable}
    todo = [states[fp] for fp in sorted(states) if fp not in accepted.validated_on]
    if not todo:
        return None
    candidate = validated_tools(candidate_of(env))  # as judge_env probes it: no property tools
    kinds = labels(candidate)

    def sweep(config: Any) -> list[str]:
        probed, state = with_markers_restored(candidate, config if isinstance(config, dict) else {}, always=True)
        return sweep_breaches(probed, runtime, state, kinds, frozenset(methods & set(state)), rules="envscaler",
                              any_result=True)

    for (s, _), breaches in zip(todo, parallel(lambda job: sweep(job[1]), todo, threads)):
        if breaches:
            reasons = [PROMOTABLE_BREACH.format(task=s.task_id, n=len(todo), k=len(accepted.validated_on), breach=b)
                       for b in breaches[:5]]
            outcome = judge_env(env, None, None, runtime, settings, reasons)
            outcome.breaches = breaches
            return outcome
    return None


def _replayable(cls: str, audits: list[CheckAudit]) -> bool:
    """Worth replaying a reference solution for: unproven, or `check_error` only for checks that raised a
    NameError or missing module on the initial state (`classify.rejudged`)."""
    return cls == "unproven" or (cls == "check_error" and all(
        rejudged(a) for a in audits if a.outcome == "check_error"))


AUDIT_RAISED = "its audit could not finish ({error}), so it is not accepted; the import's other envs are judged as usual"


def audit_or_reject(env: EnvInput, scenarios: list[ScenarioInput], solutions: dict[str, list[ToolCall]],
                    runtime: EnvRuntime, settings: Settings, static: list[str], keep_states: bool = False,
                    threads: int = 1) -> EnvOutcome:
    """`audit_env`, or a rejection naming what raised in it: envs are audited side by side and stored in
    one transaction, so one env whose validation raised (a load that timed out mid-probe, a MemoryError)
    used to end the whole import with nothing stored, its good envs lost (red team round 5, F2)."""
    try:
        return audit_env(env, scenarios, solutions, runtime, settings, static, keep_states=keep_states,
                         threads=threads)
    except Exception as exc:  # noqa: BLE001 - whatever it was, it is this env's verdict, not the import's
        error = f"{type(exc).__name__}: {short(str(exc), 300)}" if str(exc) else type(exc).__name__
        outcome = judge_env(env, None, None, runtime, settings, [AUDIT_RAISED.format(error=error)])
        outcome.scenarios = [ScenarioVerdict(audit="env_rejected", reasons=[f"env {env.env_id} rejected"])
                             for _ in scenarios]
        return outcome


def settle(verdict: ScenarioVerdict, audits: list[CheckAudit], kept: list[ToolCall], problem: str | None,
           origin: str, lost: list[str] | None = None) -> ScenarioVerdict:
    """Fold one verification attempt into the verdict. Only success changes the class: a failed
    attempt is not a reference solution, so the scenario stays as it was, the attempt is noted, and
    the reason names the attempt's real failure (it said "no reference solution yet" although one had
    been given and had failed, outside check F7a). The exceptions are faults of a check whatever the
    solution did: a non-bool after the solution makes the scenario `not_bool` (third interop check,
    F2), and a raise no state causes (a missing module, a timeout) `check_error` (round-trip check 4,
    F3: `apply_solution` classed it so, and this fold discarded it)."""
    cls, reasons = scenario_class(audits)
    if problem is None and cls == "verified":
        return verdict.model_copy(update={"audit": cls, "reasons": [], "checks": audits, "solution": kept,
                                          "origin": origin, "lost": lost or []})
    who = "the agent's solution" if origin == "agent" else "the reference solution"
    if problem is None and cls in ("not_bool", "check_error", "nondeterministic"):
        # A check that returns a non-bool on the solved state scores 0 there under EnvScaler's
        # run_check_function whatever the solution did (only an isinstance(result, bool) result counts):
        # the check, not the attempt, is what is wrong (a non-bool on the initial state is only "not
        # True there": classify.initial_audits); so with a raise no state causes. The solution is kept
        # as the evidence, so an export carries it and a re-import reaches the same class.
        return verdict.model_copy(update={"audit": cls, "reasons": reasons, "checks": audits, "state0": None,
                                          "solution": kept, "origin": origin,
                                          "attempts": [*verdict.attempts, safe(f"{origin}: {reasons[0]}")]})
    if problem is None:
        broken = next((a for a in audits if a.outcome == "unproven" and a.on_solved is None and a.error), None)
        problem = f"{who} leaves a check False" if broken is None else f"after {who}: {short(broken.error)}"
    return verdict.model_copy(update={"attempts": [*verdict.attempts, safe(f"{origin}: {problem}")],
                                      "reasons": [safe(problem)]})
