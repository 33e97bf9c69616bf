"""Stage 3: decide whether a candidate environment class is good enough to build scenarios on.

Everything executes in the sandbox (never in this process), and every episode is loaded from the test
*config* exactly as scenarios, rollouts, the gym API and MCP load it (EnvScaler's runtime: construct,
then set every top-level key); the state the class holds afterwards is only ever observed, never fed
back as a config. Steps:

1. a test config: the given one, or the LLM's (retried with the load error as feedback); one that does
   not load rejects the candidate with the load error as a contract fact;
2. tool labels: the spec's, else inferred (`tool_kinds`: name, docstring, code; the LLM too in
   `llm`/`both` modes), reported in the verdict with their sources;
3. the programmatic pass (`programmatic`, under the labels found without the LLM), then the LLM pass
   (`llm_pass`, k chains). In `both` mode the free pass gates the paid one: a candidate it rejects on a
   contract fact gets no LLM call at all (no labelling, no rounds; `report.llm_pass_skipped` says why).
   When the LLM's labels differ from the free ones, the probes are judged again under them first (a
   query that changed state is only a breach under a query label);
4. the verdict (`report.summarize`): score >= threshold, no critical contract breach, and no
   state-changing tool whose code never ran.
"""

from __future__ import annotations

import asyncio
from typing import Any

from pydantic import BaseModel, Field

from envscaler_core.config import Settings
from envscaler_core.models.env import AcceptedEnv, EnvCandidate
from envscaler_core.models.spec import EnvSpec
from envscaler_core.models.validation import ToolKindLabel, ValidationReport, ValidationRound
from envscaler_core.prompts.validate import TEST_STATE, TOOL_KINDS, StateInput, ToolKindsInput, ToolToLabel
from envscaler_core.runtime import EnvLoadError, EnvRuntime, EpisodeBreach
from envscaler_core.validation.breach_watch import BreachWatch
from envscaler_core.validation.class_effects import analysis_refusal
from envscaler_core.synth.tool_schema import class_header, method_sources, state_attributes
from envscaler_core.validation.llm_pass import LLMPass
from envscaler_core.validation.own_thread import in_own_thread
from envscaler_core.validation.programmatic import ProgrammaticPass, open_episode
from envscaler_core.validation.report import reached, summarize
from envscaler_core.validation.tool_kinds import classify_tools, merge_llm


class ValidationOutcome(BaseModel):
    """Everything Stage 3 learned about one candidate; the flow persists rounds and the env."""

    candidate_fp: str
    report: ValidationReport
    rounds: list[ValidationRound] = Field(default_factory=list)
    test_state: dict[str, Any] | None = Field(
        default=None, description="The config every episode was loaded from (given, or written by the LLM).")
    loaded_state: dict[str, Any] | None = Field(
        default=None, description="The class's public attributes right after loading that config.")
    env: AcceptedEnv | None = None
    failure: str | None = Field(default=None, description="Why validation could not run at all.")


def load_state(runtime: EnvRuntime, candidate: EnvCandidate, config: dict[str, Any]) -> dict[str, Any]:
    """The state the class holds after loading `config`; EnvLoadError when it does not load."""
    ep = open_episode(runtime, candidate, config)
    try:
        return ep.state
    finally:
        ep.close()


async def make_test_state(
    candidate: EnvCandidate, runtime: EnvRuntime, gateway: Any, introduction: str, attempts: int
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Ask for a test config until the sandbox loads it (the load error goes back as feedback); returns
    the config itself, which is what every episode will be loaded from, and the state it loaded into
    (the check's own episode: loading it a second time was ~40 ms on every candidate's critical path)."""
    feedback: str | None = None
    attributes = state_attributes(candidate.class_code, candidate.class_name)
    for _ in range(attempts):
        inp = StateInput(introduction=introduction, class_name=candidate.class_name,
                         class_code=candidate.class_code, state_attributes=attributes, feedback=feedback)
        out = await gateway.structured(TEST_STATE, inp, stage="validate_test_state")
        try:
            return out.state, await asyncio.to_thread(load_state, runtime, candidate, out.state)
        except EnvLoadError as exc:
            feedback = f"The previous state did not load: {exc}"
    raise EnvLoadError(feedback or "no test state produced")


async def label_tools(candidate: EnvCandidate, gateway: Any, mode: str, introduction: str) -> dict[str, ToolKindLabel]:
    """The spec's labels where it gives them; inferred ones (and in llm/both modes the LLM's) elsewhere."""
    from envscaler_core.llm.errors import LLMOutputInvalid

    names = [t.function.name for t in candidate.tools]
    labels = {n: ToolKindLabel(kind=candidate.tool_kinds[n], source="spec", evidence="labelled by the env spec")
              for n in names if n in candidate.tool_kinds}
    rest = [n for n in names if n not in labels]
    if not rest:
        return labels
    inferred = classify_tools(candidate.class_code, candidate.class_name, rest)
    if mode in ("llm", "both") and gateway is not None:
        sources = method_sources(candidate.class_code, candidate.class_name)
        docs = {t.function.name: t.function.description for t in candidate.tools}
        inp = ToolKindsInput(introduction=introduction, class_header=class_header(candidate.class_code, candidate.class_name),
                             tools=[ToolToLabel(name=n, description=docs.get(n, ""), source=sources.get(n, "")) for n in rest])
        try:
            out = await gateway.structured(TOOL_KINDS, inp, stage="validate_judge")
            answers = {a.tool: a for a in out.labels}
            inferred = {n: merge_llm(label, answers[n].kind if n in answers else None,
                                     answers[n].reason if n in answers else "")
                        for n, label in inferred.items()}
        except LLMOutputInvalid as exc:
            inferred = {n: label.model_copy(update={"evidence": f"{label.evidence}; LLM gave no valid labels ({exc.reason})"})
                        for n, label in inferred.items()}
    return {n: labels.get(n) or inferred[n] for n in names}


async def validate_candidate(
    candidate: EnvCandidate, runtime: EnvRuntime, gateway: Any, settings: Settings, *, spec: EnvSpec | None = None,
    test_state: dict[str, Any] | None = None, hints: dict[str, list[dict[str, Any]]] | None = None,
    any_result: bool = False,
) -> ValidationOutcome:
    """Run the configured passes and build the AcceptedEnv when the candidate earns it. A given
    `test_state` replaces the LLM-written one (it must still load). `hints`: per tool, argument sets known to
    be meant for it (an import's reference solutions), tried as positives next to the probes' own;
    `any_result`: judge calls by EnvScaler's contract, where a result need not be a dict (`facts.call_facts`).

    Infrastructure errors (LLM endpoint down, budget) propagate so the orchestrator can retry or stop;
    everything the candidate itself is responsible for ends in a report. An episode whose process was
    caught forging replies (`EpisodeBreach`, or a breach found when a pass closed it) rejects the
    candidate: the rounds judged on its replies may be forged."""
    watch = BreachWatch(runtime)
    outcome: ValidationOutcome | None = None
    try:
        outcome = await _validate(candidate, watch, gateway, settings, spec=spec, test_state=test_state,
                                  hints=hints, any_result=any_result)
    except EpisodeBreach as exc:
        watch.breaches.append(str(exc))
    except EnvLoadError as exc:  # a probe's episode did not load the config that loaded before
        outcome = _unreliable_load(candidate, settings, test_state, exc)
    if not watch.breaches:
        assert outcome is not None
        return outcome
    reason = f"the env's process forged replies to the sandbox, so no round of it is believed: {watch.breaches[0]}"
    if outcome is None:
        cfg = settings.validate_
        report = ValidationReport(accepted=False, score=0.0, threshold=cfg.threshold, mode=cfg.mode, rounds=0,
                                  critical=[reason], reasons=[reason])
        return ValidationOutcome(candidate_fp=candidate.fingerprint, report=report, test_state=test_state)
    report = outcome.report.model_copy(update={"accepted": False, "critical": [reason, *outcome.report.critical],
                                               "reasons": [reason, *outcome.report.reasons][:10]})
    return outcome.model_copy(update={"report": report, "env": None})


RELOAD_FAILED = "the class did not load again from the test state it loaded from before"


def _unreliable_load(candidate: EnvCandidate, settings: Settings, test_state: dict[str, Any] | None,
                     exc: EnvLoadError) -> ValidationOutcome:
    """A verdict, not an exception: every probe, replay and chain loads the test state afresh, so a load
    that timed out or crashed there (an `__init__` that hangs at random, or a host too loaded to load in
    time) left the candidate unjudged; it escaped as an unhandled EnvLoadError and took the validate
    verb's verdict, and a whole import, with it (red team round 5, F2). Scenarios and rollouts load the
    same way, so such a class is rejected, naming the load failure."""
    reason = f"{RELOAD_FAILED} (during probing): {exc}"
    cfg = settings.validate_
    report = ValidationReport(accepted=False, score=0.0, threshold=cfg.threshold, mode=cfg.mode, rounds=0,
                              critical=[reason], reasons=[reason])
    return ValidationOutcome(candidate_fp=candidate.fingerprint, report=report, test_state=test_state,
                             failure=reason)


async def _validate(
    candidate: EnvCandidate, runtime: EnvRuntime, gateway: Any, settings: Settings, *, spec: EnvSpec | None,
    test_state: dict[str, Any] | None, hints: dict[str, list[dict[str, Any]]] | None = None,
    any_result: bool = False,
) -> ValidationOutcome:
    cfg = settings.validate_
    introduction = spec.introduction if spec else candidate.class_name
    rules = list(spec.rules) if spec else []
    empty = ValidationReport(accepted=False, score=0.0, threshold=cfg.threshold, mode=cfg.mode, rounds=0)
    if not candidate.tools:
        return ValidationOutcome(candidate_fp=candidate.fingerprint, report=empty, failure="the class exposes no tools")
    refused = analysis_refusal(candidate.class_code, candidate.class_name)
    if refused is not None:  # before any load: a class the host will not analyse is never run either
        reason = f"the host refuses to analyse the class: {refused}"
        report = empty.model_copy(update={"critical": [reason], "reasons": [reason]})
        return ValidationOutcome(candidate_fp=candidate.fingerprint, report=report, test_state=test_state,
                                 failure=reason)
    try:
        if test_state is None:
            config, loaded = await make_test_state(candidate, runtime, gateway, introduction, settings.synth.step_attempts)
        else:
            config, loaded = test_state, await asyncio.to_thread(load_state, runtime, candidate, test_state)
    except EnvLoadError as exc:
        report = empty.model_copy(update={"critical": [str(exc)], "reasons": [str(exc)]})
        return ValidationOutcome(candidate_fp=candidate.fingerprint, report=report, test_state=test_state,
                                 failure=f"no loadable test state: {exc}")

    # labels without the LLM first: the programmatic pass needs them, and what it finds may make every
    # LLM call of this candidate pointless
    labels = await label_tools(candidate, gateway, "programmatic", introduction)
    kinds = {name: label.kind for name, label in labels.items()}
    rounds: list[ValidationRound] = []
    skipped = 0
    gated: str | None = None
    programmatic: ProgrammaticPass | None = None
    if cfg.mode in ("programmatic", "both"):
        programmatic = await _programmatic(candidate, runtime, config, kinds, cfg.rounds, loaded, hints, any_result)
        gated = _gate(programmatic.breaches) if cfg.mode == "both" else None
    if cfg.mode in ("llm", "both") and gated is None:
        labels = await label_tools(candidate, gateway, cfg.mode, introduction)
        llm_kinds = {name: label.kind for name, label in labels.items()}
        if programmatic is not None and llm_kinds != kinds:  # probes judged under other labels: again
            programmatic = await _programmatic(candidate, runtime, config, llm_kinds, cfg.rounds, loaded, hints,
                                               any_result)
        kinds = llm_kinds
        if programmatic is not None:
            breaches = sorted({r.reason for r in programmatic.rounds if r.verdict == "fail"})
            gated = _gate(breaches)
    if programmatic is not None:
        rounds += programmatic.rounds
    if cfg.mode in ("llm", "both") and gated is None:
        llm_pass = LLMPass(candidate, runtime, gateway, introduction, rules, start=len(rounds), kinds=kinds)
        await llm_pass.run(config, cfg.rounds, cfg.chains)
        rounds += llm_pass.rounds
        skipped = llm_pass.skipped
        if cfg.mode == "llm":
            rounds += await _top_up(candidate, runtime, config, kinds, rounds, loaded)
    report = summarize(rounds, cfg.threshold, cfg.mode, skipped, tools=[t.function.name for t in candidate.tools],
                       labels=labels)
    report = _name_unused_keys(report, candidate, config)
    if gated is not None:
        report = report.model_copy(update={"llm_pass_skipped": gated, "reasons": [gated, *report.reasons][:10]})
    env = _accepted_env(candidate, spec, report, kinds) if report.accepted else None
    return ValidationOutcome(candidate_fp=candidate.fingerprint, report=report, rounds=rounds, test_state=config,
                             loaded_state=loaded, env=env)


async def _programmatic(candidate: EnvCandidate, runtime: EnvRuntime, config: dict[str, Any], kinds: dict[str, str],
                        rounds: int, loaded: dict[str, Any], hints: dict[str, list[dict[str, Any]]] | None = None,
                        any_result: bool = False) -> ProgrammaticPass:
    limit = max(rounds, 2 * len(candidate.tools))
    programmatic = ProgrammaticPass(candidate, runtime, config, kinds, start=0, limit=limit, hints=hints,
                                    any_result=any_result)
    await in_own_thread(programmatic.run, loaded, name="programmatic-pass")
    return programmatic


NEVER_SUCCEEDED = "never succeeded"


def unused_config_keys(candidate: EnvCandidate, config: dict[str, Any]) -> tuple[list[str], list[str]]:
    """(top-level config keys the class's code never names, the attributes its `__init__` sets). A key
    is named when `self.<key>` appears anywhere in the class or the key is a string literal of the
    module (`getattr(self, "books")`, `init_config["books"]`); a class with a base class may inherit
    the name, so nothing is reported for it."""
    import ast

    from envscaler_core import pyast
    from envscaler_core.synth.tool_schema import find_class

    try:
        tree = pyast.parse(candidate.class_code)
        cls = find_class(tree, candidate.class_name)
    except (SyntaxError, ValueError, RecursionError):
        return [], []
    if cls.bases:
        return [], []
    named = {n.attr for n in ast.walk(cls) if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)
             and n.value.id == "self"}
    named |= {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)}
    own = list(state_attributes(candidate.class_code, candidate.class_name))
    return [k for k in config if isinstance(k, str) and k not in named], own


def _name_unused_keys(report: ValidationReport, candidate: EnvCandidate, config: dict[str, Any]) -> ValidationReport:
    """A tool that never succeeded on a state whose keys the class never uses: say so in that reason
    (a renamed key, `catalog` for `books`, left the books empty, and the rejection only said
    "borrow_book never succeeded"; outside check F7d)."""
    if report.accepted or not any(NEVER_SUCCEEDED in r for r in [*report.blocking, *report.reasons]):
        return report
    unused, own = unused_config_keys(candidate, config)
    if not unused:
        return report
    hint = (f"; the state's key(s) {', '.join(unused)} are never used by {candidate.class_name}"
            + (f" (its own attributes: {', '.join(own)})" if own else ""))
    add = lambda texts: [t + hint if NEVER_SUCCEEDED in t else t for t in texts]  # noqa: E731
    return report.model_copy(update={"blocking": add(report.blocking), "reasons": add(report.reasons)})


def _gate(breaches: list[str]) -> str | None:
    """Why the LLM rounds need not run: a contract fact rejects the candidate whatever they would say."""
    if not breaches:
        return None
    return (f"LLM rounds not run: the programmatic pass found {len(breaches)} contract breach(es) that reject "
            f"the candidate whatever the LLM says (first: {breaches[0][:160]}); no LLM validation tokens spent")


async def _top_up(candidate: EnvCandidate, runtime: EnvRuntime, config: dict[str, Any], kinds: dict[str, str],
                  rounds: list[ValidationRound], loaded: dict[str, Any]) -> list[ValidationRound]:
    """After an LLM-only pass, the programmatic search for an accepted call on each tool the proposer
    never got to succeed: the code behind its guards must run at least once, whoever finds the way."""
    unreached = {t.function.name for t in candidate.tools} - {r.tool for r in rounds if reached(r)}
    if not unreached:
        return []
    top_up = ProgrammaticPass(candidate, runtime, config, kinds, start=len(rounds))
    return await in_own_thread(top_up.run, loaded, unreached, True, name="programmatic-top-up")


def _accepted_env(candidate: EnvCandidate, spec: EnvSpec | None, report: ValidationReport,
                  kinds: dict[str, Any]) -> AcceptedEnv:
    return AcceptedEnv(
        env_id=f"env_{candidate.fingerprint[:12]}", candidate_fp=candidate.fingerprint,
        summary=spec.summary if spec else candidate.class_name,
        introduction=spec.introduction if spec else candidate.class_name,
        rules=list(spec.rules) if spec else [], class_name=candidate.class_name, class_code=candidate.class_code,
        tools=candidate.tools, tool_kinds=kinds, score=report.score, validation_mode=report.mode,
    )
