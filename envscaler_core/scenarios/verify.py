"""Verified rewards: a scenario is usable only if its checks are real, non-vacuous and satisfiable.

Everything runs through the injected `EnvRuntime` (the sandbox in production), never in-process: check
code and env code are LLM-written and untrusted. `score_checks` is the single reward function shared by
verification and rollouts, so a scenario is verified with exactly the arithmetic that later rewards it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel, Field

from envscaler_core.json_equal import same_json
from envscaler_core.models.env import AcceptedEnv
from envscaler_core.models.scenario import Scenario
from envscaler_core.models.trajectory import CheckResult
from envscaler_core.runtime import CheckOutcome, EnvLoadError, EnvRuntime, EpisodeBreach, load_failure, open_env_episode
from envscaler_core.scenarios.determinism import CHECK_REPEATS, is_nondeterministic, repeated, without_prefix
from envscaler_core.scenarios.footprint import FOOTPRINT_SCHEME, ChangeLog

Failure = Literal["load", "solution", "check_error", "nondeterministic", "vacuous", "unsatisfied", "empty", "contract"]


class CheckDiagnostic(BaseModel):
    """What one check did on the initial state and on the state after the reference solution."""

    index: int
    item: str
    on_initial: bool | None
    on_initial_error: str | None = None
    on_solved: bool | None = None
    on_solved_error: str | None = None
    problem: Literal["error", "nondeterministic", "vacuous", "unsatisfied"] | None = None


class SolutionStep(BaseModel):
    tool: str
    args: dict[str, Any]
    ok: bool
    success: bool | None = Field(default=None, description="The tool's own `success` key, when it returned one.")
    error: str | None = None
    breach: str | None = Field(default=None, description="The env contract this step broke by changing state: "
                               "a query, or a call that reported failure (docs/validation.md).")


class VerificationReport(BaseModel):
    """`ok` iff every check is a real bool, False initially and True after the reference solution."""

    ok: bool
    failure: Failure | None = None
    reason: str | None = None
    checks: list[CheckDiagnostic] = Field(default_factory=list)
    solution: list[SolutionStep] = Field(default_factory=list)
    final_state: dict[str, Any] | None = None
    footprint: list[str] | None = Field(default=None, description=(
        "What the reference solution changed (scenarios/footprint.py), once it ran: the scenario's footprint."))
    evaluations: int = Field(default=1, description="How many times each check was evaluated on each state, each "
                             "time in fresh sandbox units (results that differ are `nondeterministic`).")

    def broken_checks(self) -> list[int]:
        return [d.index for d in self.checks if d.problem is not None]


def _outcomes(runtime: EnvRuntime, sources: list[Any], initial_state: dict[str, Any], final_state: dict[str, Any],
              timeout_s: float | None, repeat: int = 0) -> list[CheckOutcome]:
    """One outcome per check, or a loud error: a short answer would silently drop checks from the reward."""
    outcomes = runtime.run_checks(sources, initial_state, final_state, timeout_s=timeout_s, repeat=repeat)
    if len(outcomes) != len(sources):
        raise RuntimeError(f"runtime returned {len(outcomes)} outcomes for {len(sources)} checks")
    return outcomes


def _run_checks(runtime: EnvRuntime, scenario: Scenario, final_state: dict[str, Any], timeout_s: float | None,
                initial_state: dict[str, Any] | None = None) -> list[CheckOutcome]:
    """`initial_state`: the checks' `initial_state` global, the episode's state right after loading (as
    EnvScaler's `get_state_info` gives it: attributes the constructor derives included); the scenario's
    config when the caller has no episode."""
    initial = scenario.initial_state if initial_state is None else initial_state
    return _outcomes(runtime, [c.code for c in scenario.checks], initial, final_state, timeout_s)


def _repeated_checks(runtime: EnvRuntime, scenario: Scenario, final_state: dict[str, Any], timeout_s: float | None,
                     initial_state: dict[str, Any], repeats: int) -> list[CheckOutcome]:
    """`_outcomes` `repeats` times, each a fresh batch of units, folded by `determinism.repeated`."""
    return repeated([c.code for c in scenario.checks],
                    lambda sources, seed: _outcomes(runtime, sources, initial_state, final_state, timeout_s, seed),
                    repeats)


def _result_of(item: str, outcome: CheckOutcome) -> CheckResult:
    # The runtime already maps non-bool returns to passed=None; re-assert it so a lax runtime
    # cannot turn a truthy int into a pass.
    passed = outcome.passed if isinstance(outcome.passed, bool) else None
    error = outcome.error if passed is None else None
    if passed is None and error is None:
        error = "check did not return a bool"
    return CheckResult(item=item, passed=passed, error=error)


def score_checks(
    env: AcceptedEnv,
    scenario: Scenario,
    final_state: dict[str, Any],
    runtime: EnvRuntime,
    timeout_s: float | None = None,
    initial_state: dict[str, Any] | None = None,
) -> tuple[float, bool, list[CheckResult]]:
    """Reward = passed / total checks; crashed checks are `passed=None` (unscored, not a pass).

    An empty checklist is an error (the reference divided by zero at reward time): a scenario without
    checks can never have been verified, so scoring it is a caller bug. `initial_state` is the checks'
    `initial_state`, the episode's state right after loading; without it the env is loaded once more on
    the scenario's state to read it, so the documented call pays what the gym, rollouts and verification
    pay (red team 9, F5: judged against the scenario's raw JSON, a check reading an attribute the
    constructor derives paid 0.0). Callers holding the episode pass it and save that load.
    """
    if not scenario.checks:
        raise ValueError(f"scenario {scenario.fingerprint[:12]} has no checks; nothing to score")
    if initial_state is None:
        initial_state = loaded_state(env, scenario, runtime)
    outcomes = _run_checks(runtime, scenario, final_state, timeout_s, initial_state)
    results = [_result_of(c.item, o) for c, o in zip(scenario.checks, outcomes)]
    passed = sum(1 for r in results if r.passed is True)
    return round(passed / len(results), 4), passed == len(results), results


def loaded_state(env: AcceptedEnv, scenario: Scenario, runtime: EnvRuntime) -> dict[str, Any]:
    """The state a fresh episode of `scenario` holds right after loading, under the env's rules: what the
    checks see as `initial_state`. Raises EnvLoadError when the env does not load, EpisodeBreach when its
    process forged the reply (no reward is to be believed then)."""
    ep = open_env_episode(runtime, env, scenario.initial_state)
    try:
        return ep.state
    finally:
        ep.close()


def execute_plan(env: AcceptedEnv, scenario: Scenario, runtime: EnvRuntime) -> tuple[list[SolutionStep], dict[str, Any]]:
    """Run the reference solution in one fresh episode; returns per-step outcomes and the final state.
    Raises EpisodeBreach when the episode's process forged replies (nothing of it is to be believed)."""
    steps, _, final_state, _ = _play_plan(env, scenario, runtime)
    return steps, final_state


def reference_footprint(env: AcceptedEnv, scenario: Scenario, runtime: EnvRuntime) -> list[str] | None:
    """The scenario's footprint (`footprint.py`): the recorded one, else what its reference solution changes,
    replayed in a fresh episode (an RL row carries the solution, under `row_sha256`, but no footprint; a
    footprint recorded under another `FOOTPRINT_SCHEME` names other paths than a trajectory's and is replayed
    too). None when there is no solution, or it does not run clean: then nothing says what the task may change."""
    if scenario.footprint is not None and scenario.footprint_scheme == FOOTPRINT_SCHEME:
        return scenario.footprint
    if not scenario.reference_solution:
        return None
    try:
        steps, _, _, changed = _play_plan(env, scenario, runtime)
    except (EnvLoadError, EpisodeBreach):
        return None
    if any(not s.ok or s.success is False or s.breach for s in steps):
        return None
    return changed


def _play_plan(env: AcceptedEnv, scenario: Scenario, runtime: EnvRuntime
               ) -> tuple[list[SolutionStep], dict[str, Any], dict[str, Any], list[str]]:
    """The solution's steps, the state the episode held right after loading (what a rollout's checks
    would see had the agent done nothing: attributes the constructor derives included), the final one,
    and every path a step changed (the footprint: `footprint.ChangeLog`, as a trajectory's are counted)."""
    ep = open_env_episode(runtime, env, scenario.initial_state)
    try:
        loaded = before = ep.state
        changes = ChangeLog(loaded)
        steps: list[SolutionStep] = []
        for call in scenario.reference_solution:
            out = ep.call(call.tool, call.args)
            success = out.result.get("success") if out.ok and isinstance(out.result, dict) else None
            err = out.error if not out.ok else (_tool_message(out.result) if success is False else None)
            steps.append(SolutionStep(tool=call.tool, args=call.args, ok=out.ok, success=success, error=err,
                                      breach=_breach(env, call.tool, success, before, out.state)))
            changes.saw(out.state)
            before = out.state
        final = ep.state
        changes.saw(final)
        return steps, loaded, final, changes.paths
    finally:
        ep.close()


def _breach(env: AcceptedEnv, tool: str, success: bool | None, before: dict[str, Any], after: dict[str, Any]) -> str | None:
    """A query that changed state, or a call that reported failure and changed it (on its Nth call in the
    episode, say, or by a change an earlier call left behind): validation rejects such an env, and the
    checks would judge a state the tools' answers do not account for. Same JSON comparison as validation."""
    if same_json(before, after):
        return None
    if env.tool_kinds.get(tool) == "query":
        return f"query tool {tool} changed state"
    if success is False:
        return f"{tool} reported failure but changed state"
    return None


def _tool_message(result: Any) -> str:
    text = json.dumps(result, default=str)
    return text if len(text) <= 300 else text[:300] + "..."


def verify_scenario(
    scenario: Scenario, env: AcceptedEnv, runtime: EnvRuntime, check_timeout_s: float,
    false_if_raised: Callable[[str | None], bool] | None = None, repeats: int = CHECK_REPEATS,
) -> VerificationReport:
    """Decide whether `scenario` may be used for RL; usable on hand-written scenarios too.

    Order matters for the diagnosis: checks are judged on the state the episode holds right after
    loading first (errors and vacuous checks are the check's fault), then on the state after the
    reference solution (still False means check or plan is wrong). Both states are the episode's, as
    in a rollout: a check reading an attribute the constructor derives from the config must see it.

    `false_if_raised`: errors on the initial state it says yes to count as False there, not as a broken
    check (the import's rule for EnvScaler's checks, which its runtime only runs on the final state:
    `final_state["reservations"]["R001"]` raises before the task made R001); the reward scores a raise 0
    either way. The factory's own scenarios leave it None: their checks must answer on every state.

    `repeats`: evaluations of every check on each state, each in fresh sandbox units; a check whose code
    breaks the rule of `determinism.py` (chance, the clock, the host), or whose evaluations of one state differ, is `nondeterministic`
    (`determinism.py`): verified once, it paid do-nothing episodes at random or after a date (rt9-A F1).
    """
    if not scenario.checks:
        return VerificationReport(ok=False, failure="empty", reason="scenario has no checks")
    try:
        steps, loaded_state, final_state, changed = _play_plan(env, scenario, runtime)
    except EnvLoadError as exc:
        return VerificationReport(ok=False, failure="load", reason=load_failure(exc))
    except EpisodeBreach as exc:  # the plan's results and states may be forged: no check is run on them
        return VerificationReport(ok=False, failure="contract",
                                  reason=f"the env's process forged replies while the reference solution ran: {exc}")
    init_outcomes = _repeated_checks(runtime, scenario, loaded_state, check_timeout_s, loaded_state, repeats)
    diags: list[CheckDiagnostic] = []
    broken_initially: set[int] = set()
    for i, (c, o) in enumerate(zip(scenario.checks, init_outcomes)):
        r = _result_of(c.item, o)
        unstable = is_nondeterministic(r.error)
        tolerated = r.passed is None and not unstable and false_if_raised is not None and false_if_raised(r.error)
        problem = ("nondeterministic" if unstable else None if tolerated else "error" if r.passed is None
                   else ("vacuous" if r.passed else None))
        if problem == "error":
            broken_initially.add(i)
        diags.append(CheckDiagnostic(index=i, item=c.item, on_initial=r.passed, on_initial_error=r.error, problem=problem))
    solved = _repeated_checks(runtime, scenario, final_state, check_timeout_s, loaded_state, repeats)
    for d, c, o in zip(diags, scenario.checks, solved):
        r = _result_of(c.item, o)
        d.on_solved, d.on_solved_error = r.passed, r.error
        if d.problem in (None, "vacuous") and is_nondeterministic(r.error):
            d.problem = "nondeterministic"
        elif d.problem is None and r.passed is None:
            d.problem = "error"
        elif d.problem is None and r.passed is False:
            d.problem = "unsatisfied"
    report = VerificationReport(ok=True, checks=diags, solution=steps, final_state=final_state, evaluations=max(1, repeats),
                                footprint=changed)
    unstable = [d for d in diags if d.problem == "nondeterministic"]
    errors = [d for d in diags if d.problem == "error"]
    vacuous = [d for d in diags if d.problem == "vacuous"]
    unsat = [d for d in diags if d.problem == "unsatisfied"]
    bad_steps = [f"#{i} {s.tool}: {s.error}" for i, s in enumerate(steps) if not s.ok or s.success is False]
    breaches = [f"#{i} {s.breach}" for i, s in enumerate(steps) if s.breach]
    if breaches:
        report.failure = "contract"
        report.reason = ("the env broke its contract while the reference solution ran: " + "; ".join(breaches)
                         + " (a change is its step's own or was left behind by an earlier step)")
    elif unstable:
        report.failure = "nondeterministic"
        report.reason = "; ".join(
            f"check {d.index} ({d.item!r}) is nondeterministic: "
            + without_prefix(d.on_initial_error if is_nondeterministic(d.on_initial_error) else d.on_solved_error)
            for d in unstable)
    elif errors:
        report.failure = "check_error"
        report.reason = "; ".join(
            _check_failed(d.index, d.item, "on the initial state", d.on_initial_error) if d.index in broken_initially
            else _check_failed(d.index, d.item, "after the reference solution", d.on_solved_error) for d in errors
        )
    elif vacuous:
        report.failure = "vacuous"
        report.reason = "; ".join(
            f"check {d.index} ({d.item!r}) is already True on the initial state (rewards doing nothing)" for d in vacuous
        )
    elif unsat:
        report.failure = "solution" if bad_steps else "unsatisfied"
        names = ", ".join(f"{d.index} ({d.item!r})" for d in unsat)
        report.reason = f"after the reference solution these checks are still False: {names}"
        if bad_steps:
            report.reason += "; failed solution steps: " + "; ".join(bad_steps)
    report.ok = report.failure is None
    return report


def _check_failed(index: int, item: str, where: str, error: str | None) -> str:
    """One check that gave no bool: it raised (its error's last line) or returned something else; a raise
    was reported as "did not return a bool" followed by the whole traceback (interop re-check, F6a)."""
    text = error or "check did not return a bool"
    if text.startswith(("check did not return a bool", "check_func returned")):
        return f"check {index} ({item!r}) did not return a bool {where}: {text}"
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return f"check {index} ({item!r}) raised {where}: {lines[-1] if lines else text}"
