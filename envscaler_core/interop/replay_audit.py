"""Replaying an imported scenario's reference solution the way EnvScaler's runtime plays it, and judging its
checks on the result (`verify`), with the reason when no call of it runs there (`_nothing_runs`) or when one
leaves a state the sandbox cannot carry (`sandboxed.beyond_the_wire`). Split from `envjob` by job: the env's
verdict is there, the scenarios' replays here."""

from __future__ import annotations

from typing import Any

from envscaler_core.interop.classify import apply_solution, short
from envscaler_core.interop.read import EnvInput, ScenarioInput
from envscaler_core.interop.sandboxed import (
    Breaker, beyond_the_wire, lost_when_flattened, parallel, private_reads, raw_result, replay, run_checks,
)
from envscaler_core.models.interop import CheckAudit
from envscaler_core.models.scenario import ToolCall
from envscaler_core.runtime import EnvRuntime
from envscaler_core.scenarios.determinism import CHECK_REPEATS


def verify(runtime: EnvRuntime, env: EnvInput,
           jobs: list[tuple[ScenarioInput, dict[str, Any], list[CheckAudit], list[ToolCall]]],
           check_timeout_s: float, threads: int = 1, repeats: int = CHECK_REPEATS
           ) -> list[tuple[list[CheckAudit], list[ToolCall], str | None, list[str]]]:
    """Replay each candidate solution EnvScaler's way (one sandbox episode each) and judge the
    unproven checks on the result (one unit per check).

    A call EnvScaler would reject as invalid (no such attribute) or that raises (its runtime would end
    the episode with reward 0 there) is dropped and the rest replayed again from the initial state;
    the solution counts only if that second replay runs clean. Every replay runs the env's own (validated)
    class, and each job keeps its own kill/timeout bookkeeping, so no job changes another's verdict.
    Each result ends with what of the solved state the factory's plain JSON loses (`lost_when_flattened`)."""
    if not jobs:
        return []

    def one(job: tuple[ScenarioInput, dict[str, Any], list[CheckAudit], list[ToolCall]]
            ) -> tuple[list[CheckAudit], list[ToolCall], str | None, list[str]]:
        s, state0, audits, calls = job
        breaker = Breaker(check_timeout_s)
        result = replay(runtime, env.code, env.class_name, s.config, calls, breaker)
        if "crashes" in result.statuses:  # not an episode outcome: the record's solution cannot be run there
            why = result.errors[result.statuses.index("crashes")]
            return audits, calls, f"the reference solution crashes EnvScaler's runtime: {short(why)}", []
        if (beyond := beyond_the_wire(calls, result)) is not None:  # our limit, not its runtime's (rt22-R13 F5)
            return audits, calls, beyond, []
        plan = [c for c, st in zip(calls, result.statuses) if st == "ok"] if result.state is not None else calls
        dropped = next((f"{c.tool}: {short(e) if e else 'no such tool'}" for c, st, e
                        in zip(calls, result.statuses, result.errors) if st != "ok"), None)
        first = result.statuses
        if result.state is not None and len(plan) != len(calls):
            result = replay(runtime, env.code, env.class_name, s.config, plan, breaker)
        bad = next((e or "invalid call" for st, e in zip(result.statuses, result.errors) if st != "ok"), None)
        if result.state is None:
            return audits, plan, f"the reference solution could not be replayed: {short(result.error)}", []
        if bad is not None:
            return audits, plan, f"the reference solution fails under EnvScaler's runtime: {short(bad)}", []
        if not plan:
            return audits, plan, _nothing_runs(calls, first, dropped), []
        outcomes = run_checks(runtime, [src for _, src in s.checks or []], state0, result.state, breaker, repeats)
        sources = [src for _, src in s.checks or []]
        lost = lost_when_flattened(result.state) + private_reads(result.state, sources)
        return apply_solution(audits, [raw_result(o) for o in outcomes]), plan, None, lost

    return parallel(one, jobs, threads)


def _nothing_runs(calls: list[ToolCall], statuses: list[str], dropped: str | None) -> str:
    """Why no call of the solution runs under EnvScaler's runtime: a message to the user that ends the
    episode before any accepted call (the later calls are not "not accepted": they never run), or no call
    it accepts at all."""
    if "ended" in statuses:
        at = statuses.index("ended")
        return (f"the reference solution's call {at + 1} of {len(calls)}, {calls[at].tool} (the message to the user, a name "
                "EnvScaler's runtime reserves), ends the episode there before any call it accepts has run")
    return "the reference solution has no call EnvScaler's runtime accepts" + (f" (first: {dropped})" if dropped else "")
