"""The programmatic pass's runs of several calls in one episode (a mixin of `ProgrammaticPass`).

Each probe is one call in a fresh episode; these runs put the calls the probes saw side by side in the
orders agents use, and look for what one call leaves for the next:

- `_sequence`: one episode, in order: each refusal, another refusal, a query (what follows an error);
  each accepted state change followed by every accepted query, round-robin (so every query also runs
  right before the next state change); each refusal right before each accepted state change, in turn; then the accepted calls cycled to at least SEQUENCE_CALLS, and two queries after a pause.
  Every call is judged against the state the call before it left (a change a thread or a finaliser
  made in between is in its diff);
- `_without_idle_calls`: the state changes that succeeded there, again in a fresh episode without the
  queries and refusals between them, must leave the same states;
- `_before_a_change`: every refusal and query the probes saw (boundary refusals included), then an
  accepted state change, in a fresh episode per change (a different idle call right before each): that
  change must leave the state it left in its own probe.

"The same state" is `state_match.same_state`: exact, but at the paths a tool's own replay showed as
nondeterministic (of the tools that ran) and for clock stamps a moment apart.
"""

from __future__ import annotations

import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from envscaler_core.models.validation import ValidationRound
from envscaler_core.runtime import CallOutcome, EnvLoadError, Episode
from envscaler_core.validation.facts import CallFacts, call_facts, succeeded
from envscaler_core.validation.probes import Probe
from envscaler_core.validation.state_match import Path, same_state

SEQUENCE_CALLS = 32  # the one-episode run has at least this many calls (past a rollout's default 30 steps)
MAX_SEQUENCE_CALLS = 120  # ... and at most this many before the pause
MAX_SEQUENCE_REFUSALS = 8  # refusals (one per tool in turn) run in it
MAX_IDLE = 24  # idle calls (refusals, queries) run before each state change in a fresh episode
MAX_CHANGE_EPISODES = 8  # ... for at most this many accepted state changes
SETTLE_S = 0.1  # the pause before the last two queries, for a change a timer makes after a reply
SETTLED = "the pause"  # marks those last queries
Call = tuple[str, dict[str, Any]]
Trace = list[tuple[str, dict[str, Any], CallOutcome]]


def reached_outcome(out: CallOutcome) -> bool:
    return out.ok and isinstance(out.result, dict) and out.result.get("success") is True


def reached_round(r: ValidationRound) -> bool:
    return succeeded(r.observation, r.verdict)


def refused_round(r: ValidationRound) -> bool:
    return isinstance(r.observation, dict) and r.observation.get("success") is False and r.verdict != "fail"


def _round_robin(groups: list[list[Call]], limit: int) -> list[Call]:
    out: list[Call] = []
    for k in range(max((len(g) for g in groups), default=0)):
        out += [g[k] for g in groups if k < len(g) and g[k] not in out]
    return out[:limit]


def _first_per_tool(calls: list[Call]) -> list[Call]:
    return [c for n, c in enumerate(calls) if c[0] not in {d[0] for d in calls[:n]}]


def sequence_steps(accepted: list[Call], queries: list[Call], refusals: list[Call]) -> list[Call]:
    """The calls of `_sequence` before its pause (see the module's docstring)."""
    changes = [c for c in accepted if c not in queries]
    by_tool_c, by_tool_q = _first_per_tool(changes), _first_per_tool(queries)
    steps: list[Call] = []
    # each state change tool, then each query tool in turn: every query tool also right before a change;
    # first, while the state still holds what the changes spend (two copies to lend)
    for off in range(max(len(by_tool_q), 1) if changes else 0):
        for i, change in enumerate(by_tool_c):
            steps += [change] + ([by_tool_q[(i + off) % len(by_tool_q)]] if by_tool_q else [])
    # a refusal, another one, a query, the first again, a state change (each in turn)
    for j, refusal in enumerate(refusals[:MAX_SEQUENCE_REFUSALS]):
        steps += [refusal, refusals[(j + 1) % min(len(refusals), MAX_SEQUENCE_REFUSALS)]]
        steps += [by_tool_q[j % len(by_tool_q)]] if by_tool_q else []
        steps += [refusal, changes[(j + 1) % len(changes)]] if changes else []
    rest = [c for c in accepted if c not in by_tool_c + by_tool_q] or accepted
    k = 0
    while k < len(rest) or len(steps) < SEQUENCE_CALLS:  # every other accepted call, then cycled
        steps.append(rest[k % len(rest)])
        if by_tool_q and rest[k % len(rest)] not in queries:
            steps.append(by_tool_q[k % len(by_tool_q)])
        k += 1
    return steps[:MAX_SEQUENCE_CALLS]


class SequenceChecks:
    """Mixed into `ProgrammaticPass` (which provides these attributes and `_record`)."""

    kinds: dict[str, str]
    rounds: list[ValidationRound]
    volatile: dict[str, set[Path]]
    started: float
    any_result: bool = False

    def _open(self) -> Episode:
        """A fresh episode loaded from the test state, as every episode of Stage 3."""
        return self.runtime.open_episode(self.candidate.class_code, self.candidate.class_name, self.config,  # type: ignore[attr-defined]
                                         tools=[t.model_dump() for t in self.candidate.tools])  # type: ignore[attr-defined]

    def _slack(self) -> float:
        """How far apart two clock stamps of this pass can be: the time it has run, and a second more."""
        return time.monotonic() - self.started + 1.0

    def _volatile(self, tools: Any) -> set[Path]:
        return {p for tool in set(tools) for p in self.volatile.get(tool, ())}

    def _accepted(self) -> list[Call]:
        out: list[Call] = []
        for r in self.rounds:
            if r.check != "search" and reached_round(r) and (r.tool, r.args) not in out:
                out.append((r.tool, r.args))
        return out

    def _idle(self, queries: bool = True) -> list[Call]:
        """The refusals the probes saw (boundary ones included), with the accepted queries if `queries`,
        one per tool in turn (at most MAX_IDLE)."""
        groups: dict[str, list[Call]] = {}
        for r in self.rounds:
            query = queries and reached_round(r) and self.kinds.get(r.tool) == "query"
            if (refused_round(r) or query) and "after " not in r.reason and r.check != "sequence":
                groups.setdefault(r.tool, []).append((r.tool, r.args))
        return _round_robin(list(groups.values()), MAX_IDLE)

    def _sequence(self) -> None:
        """The one-episode run (module docstring). A refusal there is fine (earlier calls changed the
        state); an exception, a crash, a non-dict answer, a failure that changed state or a query that
        changed state is a breach, recorded as the one `sequence` round (a sound class gets none)."""
        accepted = self._accepted()
        if not accepted:
            return
        queries = [c for c in accepted if self.kinds.get(c[0]) == "query"]
        steps: list[tuple[str, dict[str, Any], str | None]] = [
            (*c, None) for c in sequence_steps(accepted, queries, self._idle(queries=False))]
        steps += [(*queries[i % len(queries)], SETTLED) for i in range(2)] if queries else []
        trace: Trace = []  # every step that ran, in order
        ep = self._open()
        try:
            before = ep.state
            for n, (tool, args, after) in enumerate(steps):
                if after == SETTLED and steps[n - 1][2] != SETTLED:
                    time.sleep(SETTLE_S)  # the unit is frozen meanwhile: a timer fires when the next call resumes it
                out = ep.call(tool, args)
                if not out.ok and out.error_kind == "schema":
                    continue
                facts = call_facts(out, before, self.kinds.get(tool), any_result=self.any_result)
                if facts.critical:
                    self._record_sequence_breach(steps, n, out, before, facts)
                    return
                if out.error_kind in ("timeout", "crash"):
                    return
                trace.append((tool, args, out))
                before = out.state
        finally:
            ep.close()
        self._without_idle_calls(trace)

    def _record_sequence_breach(self, steps: list[tuple[str, dict[str, Any], str | None]], n: int,
                                out: CallOutcome, before: dict[str, Any], facts: CallFacts) -> None:
        tool, args, after = steps[n]
        where = f"call {n + 1} of one episode running the accepted calls and refusals in turn"
        if after is None and n:
            after = f"{steps[n - 1][0]} {steps[n - 1][1]} (call {n})"
        if after is not None and facts.changed:
            where += (f", right after {after}" if after != SETTLED else
                      f", a query run {SETTLE_S} s after the last call")
            where += ("; the change is its own or was left behind by an earlier call (a thread, "
                      "a finaliser, a deferred write)")
        facts.critical = [f"{c} ({where}; the same call passed in a fresh episode)" for c in facts.critical]
        probe = Probe(tool=tool, args=args, case_type="positive", purpose="sequence",
                      note=f"after {n} earlier call(s) in the same episode")
        self._record(probe, out, before, facts, "sequence")  # type: ignore[attr-defined]

    def _without_idle_calls(self, trace: Trace) -> None:
        """The sequence again without its queries and refused calls, which change nothing in a sound class,
        so every state change left must leave the very state it left with them. A change that a refusal
        or a query kept back and made during a later state change that succeeded (or left to a thread or
        a finaliser that fired then) passes as that call's own in the diffs; here it is a difference."""
        kept = [n for n, (tool, _, out) in enumerate(trace) if self.kinds.get(tool) != "query" and reached_outcome(out)]
        if len(kept) == len(trace) or not kept:
            return
        ep = self._open()
        try:
            before = ep.state
            for m, n in enumerate(kept):
                tool, args, out = trace[n]
                again = ep.call(tool, args)
                if again.error_kind in ("timeout", "crash"):
                    return  # its own probes and the sequence judge those
                volatile = self._volatile(trace[k][0] for k in kept[:m + 1])
                if not (reached_outcome(again) and same_state(again.state, out.state, volatile, self._slack())):
                    self._record_idle_change(trace, kept, n, again, before)
                    return
                before = again.state
        finally:
            ep.close()

    def _record_idle_change(self, trace: Trace, kept: list[int], n: int, again: CallOutcome,
                            before: dict[str, Any]) -> None:
        """One `sequence` round for a state change whose outcome depended on the queries and refusals before it."""
        idle = [trace[m] for m in range(n) if m not in kept]
        refused = Counter(tool for tool, _, out in idle if self.kinds.get(tool) != "query")
        queries = Counter(tool for tool, _, out in idle if self.kinds.get(tool) == "query")
        named = "; ".join(f"{what}: " + ", ".join(f"{t} x{c}" for t, c in counts.items())
                          for what, counts in (("refused", refused), ("queries", queries)) if counts)
        tool, args, _ = trace[n]
        last = f"; right after {trace[n - 1][0]} {trace[n - 1][1]}" if n and n - 1 not in kept else ""
        reason = (f"a refused call or a query changed state later on: {tool} (call {n + 1} of one episode running "
                  f"the accepted calls and refusals in turn{last}) left another state, or another answer, once the "
                  f"calls before it that must change nothing were left out ({named}); a change kept back, or left "
                  "to a thread or a finaliser, showed up in a later call's diff")
        facts = CallFacts(critical=[reason], changed=True)
        probe = Probe(tool=tool, args=args, case_type="positive", purpose="sequence",
                      note=f"the sequence without its {len(idle)} queries and refusals")
        self._record(probe, again, before, facts, "sequence", labels_decide=bool(queries))  # type: ignore[attr-defined]

    def _before_a_change(self, pool: ThreadPoolExecutor) -> list[Any]:
        """Per accepted state change (one per tool first, then the tools' other accepted calls; at most
        MAX_CHANGE_EPISODES), a fresh episode: every refusal the probes saw (boundary refusals included)
        and every accepted query (at most MAX_IDLE, one per tool in turn), then that change, which must
        leave the state it left in its own probe. The idle calls are rotated so that each change comes
        right after another one: a change a refusal or a query keeps back for the next state change
        passes as that change's own in every diff; here it is a difference. Started here on the pool
        and judged by `_judge_before_a_change`."""
        changes = [r for r in self.rounds if r.check == "contract" and reached_round(r) and r.state_after
                   is not None and self.kinds.get(r.tool) == "state_change" and "after " not in r.reason]
        changes = sorted(changes, key=lambda r: r.tool in {c.tool for c in changes[:changes.index(r)]})
        idle = self._idle()
        if not changes or not idle:
            return []

        def run(first: list[Call], change: ValidationRound) -> tuple[CallOutcome, dict[str, Any]] | None:
            ep = self._open()
            try:
                for tool, args in first:
                    opening = ep.call(tool, args)
                    idle_again = opening.ok and isinstance(opening.result, dict) and (
                        opening.result.get("success") is False or self.kinds.get(tool) == "query")
                    if not idle_again:  # its probe ran from another state: nothing to judge here
                        return None
                return ep.call(change.tool, change.args), opening.state
            finally:
                ep.close()

        started = []
        for i, change in enumerate(changes[:MAX_CHANGE_EPISODES]):
            k = (i + 1) % len(idle)
            first = idle[k:] + idle[:k]  # idle[i] right before the change
            started.append((first[-1], change, pool.submit(run, first, change)))
        return started

    def _judge_before_a_change(self, started: list[Any]) -> None:
        """The first of those episodes, in order, whose state change left another state."""
        broken = any(r.check == "sequence" for r in self.rounds)
        for first, change, future in started:
            try:
                done = future.result()
            except EnvLoadError:  # the config loaded before: nothing to judge about this call
                continue
            if done is None or broken:
                continue  # the sequence already said it
            out, before = done
            if out.error_kind in ("timeout", "crash"):
                continue  # its own probes judge that
            if reached_outcome(out) and same_state(out.state, change.state_after, self._volatile([change.tool]),
                                                   self._slack()):
                continue
            what = "a query" if self.kinds.get(first[0]) == "query" else "a refused call"
            reason = (f"{what} changed state later on: {change.tool} {change.args} right after {first[0]} {first[1]} "
                      "left another state, or gave another answer, than in a fresh episode; a change kept back, or "
                      f"left to a thread or a finaliser, showed up in {change.tool}'s diff")
            probe = Probe(tool=change.tool, args=change.args, case_type="positive", purpose="sequence",
                          note=f"after {first[0]}")
            self._record(probe, out, before, CallFacts(critical=[reason], changed=True), "sequence",  # type: ignore[attr-defined]
                         labels_decide=what == "a query")
            broken = True
