"""The programmatic pass: probes from `probes.ToolPlan`, each in a fresh sandbox episode loaded from the
test state (the config, exactly as a scenario would load it), verdicts from contract facts alone.

Per tool: positive candidates are tried until the env accepts one (each refusal is kept as an
uncounted `search` round: it shows what was tried, and a refusal that still changed state is a fact
like any other); then edge records, a missing id and out-of-range numbers. A state-changing success is
replayed once from the same state to catch nondeterminism. A tool that times out or crashes is not
probed further (each further probe would only wait for the same limit again).
"""

from __future__ import annotations

import re
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from envscaler_core.json_equal import same_json
from envscaler_core.models.env import EnvCandidate
from envscaler_core.models.validation import ValidationRound
from envscaler_core.runtime import CallOutcome, EnvLoadError, EnvRuntime, Episode
from envscaler_core.validation.code_effects import ClassEffects
from envscaler_core.validation.facts import CallFacts, call_facts, changed_paths, query_changed
from envscaler_core.validation.probes import Probe, ToolPlan, plan_tools
from envscaler_core.validation.setup_calls import fed_args, result_keys, same_name, set_up

SEARCH = "search"  # a refused positive attempt: shown, never counted
PROBE_THREADS = 4  # probes of different tools at once; each waits on its own sandbox episode
MAX_SETUPS = 6  # setups (other tools' state changes) tried before a state-changing tool no probe reached
SETUP_VARIANTS = 2  # ... per tool: its accepted call and its next positive
MAX_SETUP_POSITIVES = 2  # ... with its best positive candidates
MAX_SETUP_DEPTH = 3  # rounds of that, each able to start from a tool the round before reached
SEQUENCE_CALLS = 32  # the one-episode run of every accepted call, cycled to this many calls (past max_steps)
SETTLE_S = 0.1  # ... then a pause before the last witness queries, for a change a timer makes after a reply
SETTLED = "the pause"
MAX_BEFORE_CHANGE = 12  # refusals and queries each tried once before an accepted state change  # marks those last witness queries
_Record = tuple[Probe, CallOutcome, dict[str, Any], CallFacts, str]  # what `_record` turns into a round


def observation(outcome: CallOutcome) -> Any:
    """What the judge (and the agent, later) sees of a call: the result, or the sandbox's error."""
    return outcome.result if outcome.ok else {"error": outcome.error, "error_kind": outcome.error_kind}


def open_episode(runtime: EnvRuntime, candidate: EnvCandidate, config: dict[str, Any]) -> Episode:
    """Every episode of Stage 3 loads the class from the config, as scenarios and rollouts will."""
    return runtime.open_episode(candidate.class_code, candidate.class_name, config,
                                tools=[t.model_dump() for t in candidate.tools])


def class_effects(candidate: EnvCandidate) -> ClassEffects | None:
    try:
        return ClassEffects(candidate.class_code, candidate.class_name)
    except (SyntaxError, ValueError):
        return None


class ProgrammaticPass:
    def __init__(self, candidate: EnvCandidate, runtime: EnvRuntime, config: dict[str, Any],
                 kinds: dict[str, str], start: int = 0, limit: int | None = None,
                 effects: ClassEffects | None = None) -> None:
        self.candidate, self.runtime, self.config, self.kinds = candidate, runtime, config, kinds
        self.start, self.limit = start, limit
        # parsed here, on the caller's thread: CPython 3.11's ast.parse is not safe to run in two
        # threads at once ("AST constructor recursion depth mismatch"), and run() goes to a worker
        self.effects = effects if effects is not None else class_effects(candidate)
        self.rounds: list[ValidationRound] = []
        self.breaches: list[str] = []
        """Contract breaches that hold whatever the tools' labels are (a query that changed state is not
        one of them: another labeller could call that tool a state change)."""

    def counted(self) -> int:
        return sum(1 for r in self.rounds if r.check != SEARCH)

    def run(self, loaded_state: dict[str, Any], only: set[str] | None = None,
            search_only: bool = False) -> list[ValidationRound]:
        """All probes of every tool (or of the tools in `only`; with `search_only`, just the search for
        an accepted positive call, which is what a coverage top-up after the LLM pass needs).

        Each probe is a fresh episode, so tools are probed side by side (`PROBE_THREADS`), and the
        rounds are recorded in tool order afterwards: the pass sat on validation's critical path for
        ~1 s per candidate when its probes ran one after another (bench_pipeline), and its rounds, their
        indices and the breaches are the same either way."""
        tools = [t for t in self.candidate.tools if only is None or t.function.name in only]
        plans = plan_tools(tools, loaded_state, self.effects)
        with ThreadPoolExecutor(PROBE_THREADS, thread_name_prefix="probes") as pool:
            optional: list[Probe] = []
            for records, boundaries in pool.map(lambda plan: self._tool(plan, search_only), plans):
                for record in records:
                    self._record(*record)
                optional += boundaries
            self._after_setup(plans, pool)  # before the optional boundaries: coverage decides acceptance
            if only is None and not search_only:
                pending = self._before_a_change(pool)  # its episodes run beside the sequence's
                self._sequence()
                self._judge_before_a_change(*pending)
            done = 0
            while done < len(optional) and (self.limit is None or self.counted() < self.limit):
                room = len(optional) - done if self.limit is None else self.limit - self.counted()
                window = optional[done:done + min(room, PROBE_THREADS)]
                for probe, (out, before, facts) in zip(window, pool.map(self._execute, window)):
                    if out is not None:  # the window fits the room left, so the limit is never passed
                        self._record(probe, out, before, facts, "boundary")
                done += len(window)
        return self.rounds

    def _after_setup(self, plans: list[ToolPlan], pool: ThreadPoolExecutor) -> None:
        """A tool that no probe reached (a state change, or a query that answers only in a session) gets
        its positives again, each after other tools' accepted state changes in the same episode (`login`, then `set_my_email`; `login`, then
        `select_account`, then `deposit`): one call per fresh episode can never reach a tool that needs
        earlier ones, and coverage would block an env an agent can use. A tool reached this way extends
        the setups the others try next (at most MAX_SETUP_DEPTH rounds). Refusals stay uncounted search
        rounds; the first success is the tool's round."""
        done = [r for r in self.rounds if r.check == "contract" and reached_round(r) and r.state_after is not None
                and changed_paths(r.state_before or {}, r.state_after)]
        by_tool = {p.tool: p for p in plans}
        setups = []
        for r in done:  # the accepted call first, then the tool's other positives (another user may own the account)
            if self.kinds.get(r.tool) == "state_change" and r.tool in by_tool:
                others = [p.args for p in by_tool[r.tool].positives() if p.args != r.args][:SETUP_VARIANTS - 1]
                setups += [[(r.tool, args)] for args in [r.args, *others]]
        reached = {r.tool for r in self.rounds if reached_round(r)}
        # queries too: `my_orders` answers only after `login` (an outside check's session env was rejected);
        # not a tool that already broke the contract (a hang would only cost its timeout again)
        broken = {r.tool for r in self.rounds if r.verdict == "fail"}
        stuck = [p for p in plans if p.tool not in reached and p.tool not in broken]
        for _ in range(MAX_SETUP_DEPTH):
            latest = setups[-MAX_SETUPS:]  # the deepest chains first: each round starts from the last one's
            progressed = [plan for plan in stuck if self._reach_after(plan, latest, setups, pool)]
            stuck = [plan for plan in stuck if plan not in progressed]
            if not progressed or not stuck:
                return

    def _sequence(self) -> None:
        """Every accepted call again (every probe a tool said yes to: positives, edges, setups), one after
        another in a single episode, cycled to SEQUENCE_CALLS calls, more than a rollout's default 30
        steps: each probe above is one call in a fresh episode, so a class that only breaks once an
        episode has seen a few calls (a counter, a list it outgrows, a trap) would pass them all and
        fail every scenario. A refusal here is fine (earlier calls changed the state); an exception, a
        crash, a non-dict answer, a failure that changed state or a query that changed state (on its
        second call, say) is a breach. Only breaking calls are recorded, so a sound class's rounds and
        score are what the probes made them.

        A change can also show up one call late: left by a thread the call started, a finaliser, or a
        write the class kept back and makes during its next call. Behind a state change that succeeds
        it would pass as that call's own, so when an accepted query exists, it runs as a *witness*
        after every other call (and twice more after a pause at the end, for timers): a change in a
        witness's diff is a query that changed state, named with the call it followed."""
        accepted = [(r.tool, r.args) for r in self.rounds if r.check != SEARCH and reached_round(r)]
        if not accepted:
            return
        witness = next((call for call in accepted if self.kinds.get(call[0]) == "query"), None)
        calls = [accepted[i % len(accepted)] for i in range(max(SEQUENCE_CALLS, len(accepted)))]
        steps: list[tuple[str, dict[str, Any], str | None]] = []
        for k, (tool, args) in enumerate(calls):
            steps.append((tool, args, None))
            if witness is not None and (tool, args) != witness:
                steps.append((*witness, f"{tool} (call {k + 1})"))
        if witness is not None:
            steps += [(*witness, SETTLED), (*witness, SETTLED)]
        trace: list[tuple[str, dict[str, Any], CallOutcome]] = []  # every step that ran, in order
        ep = open_episode(self.runtime, self.candidate, self.config)
        try:
            for n, (tool, args, after) in enumerate(steps):
                if after == SETTLED and steps[n - 1][2] != SETTLED:
                    time.sleep(SETTLE_S)  # the unit is frozen meanwhile: a timer fires when the next call resumes it
                before = ep.state
                out = ep.call(tool, args)
                if not out.ok and out.error_kind == "schema":
                    continue
                facts = call_facts(out, before, self.kinds.get(tool))
                if facts.critical:
                    where = f"call {n + 1} of one episode running every accepted call in turn"
                    if after is None and n:
                        after = f"{steps[n - 1][0]} (call {n})"
                    if after is not None and facts.changed:
                        where += (f", right after {after}" if after != SETTLED else
                                  f", a query run {SETTLE_S} s after the last call")
                        where += ("; the change is its own or was left behind by an earlier call (a thread, "
                                  "a finaliser, a deferred write)")
                    facts.critical = [f"{c} ({where}; the same call passed in a fresh episode)" for c in facts.critical]
                    probe = Probe(tool=tool, args=args, case_type="positive", purpose="sequence",
                                  note=f"after {n} earlier call(s) in the same episode")
                    self._record(probe, out, before, facts, "sequence")
                    return
                if out.error_kind in ("timeout", "crash"):
                    return
                trace.append((tool, args, out))
        finally:
            ep.close()
        self._without_idle_calls(trace)

    def _without_idle_calls(self, trace: list[tuple[str, dict[str, Any], CallOutcome]]) -> None:
        """The sequence again without its queries and refused calls, which change nothing in a sound class,
        so every state change left must leave the very state it left with them. A change that a refusal
        or a query kept back and made during a later state change that succeeded (or left to a thread or
        a finaliser that fired then) passes as that call's own in the diffs; here it is a difference.
        With nondeterministic values (a new uuid per call) only which attributes changed, and how often,
        is compared."""
        kept = [n for n, (tool, _, out) in enumerate(trace) if self.kinds.get(tool) != "query" and reached_outcome(out)]
        if len(kept) == len(trace) or not kept:
            return
        exact = not any("nondeterministic" in r.reason for r in self.rounds)
        ep = open_episode(self.runtime, self.candidate, self.config)
        try:
            start = before = ep.state
            for n in kept:
                tool, args, out = trace[n]
                again = ep.call(tool, args)
                if again.error_kind in ("timeout", "crash"):
                    return  # its own probes and the sequence judge those
                earlier = trace[n - 1][2].state if n else start
                same = reached_outcome(again) and (
                    _same_but_clock(again.state, out.state) if exact else _shape(before, again.state) == _shape(earlier, out.state))
                if not same:
                    self._record_idle_change(trace, kept, n, again, before)
                    return
                before = again.state
        finally:
            ep.close()

    def _record_idle_change(self, trace: list[tuple[str, dict[str, Any], CallOutcome]], kept: list[int], n: int,
                            again: CallOutcome, before: dict[str, Any]) -> None:
        """One `sequence` round for a state change whose outcome depended on the queries and refusals before it."""
        idle = [trace[m] for m in range(n) if m not in kept]
        refused = Counter(tool for tool, _, out in idle if self.kinds.get(tool) != "query")
        queries = Counter(tool for tool, _, out in idle if self.kinds.get(tool) == "query")
        named = "; ".join(f"{what}: " + ", ".join(f"{t} x{c}" for t, c in counts.items())
                          for what, counts in (("refused", refused), ("queries", queries)) if counts)
        tool, args, _ = trace[n]
        reason = (f"a refused call or a query changed state later on: {tool} (call {n + 1} of one episode running "
                  f"every accepted call in turn) left another state, or another answer, once the calls before it "
                  f"that must change nothing were left out ({named}); a change kept back, or left to a thread or "
                  "a finaliser, showed up in a later call's diff")
        facts = CallFacts(critical=[reason], changed=True)
        probe = Probe(tool=tool, args=args, case_type="positive", purpose="sequence",
                      note=f"the sequence without its {len(idle)} queries and refusals")
        self._record(probe, again, before, facts, "sequence", labels_decide=bool(queries))

    def _before_a_change(self, pool: ThreadPoolExecutor) -> tuple[ValidationRound | None, list[Any]]:
        """Each refusal and each accepted query the probes saw, then an accepted state change, in a fresh
        episode: they change nothing in a sound class, so the state change must leave the state it left
        in its own probe. A change a refusal or a query keeps back for the next state change (a pending
        write, a finaliser that a collection runs) passes as that change's own in every diff; here it
        is a difference, a `sequence` round naming the call that kept it back. At most MAX_BEFORE_CHANGE
        such episodes, started here on the pool and judged by `_judge_before_a_change`."""
        change = next((r for r in self.rounds if r.check == "contract" and reached_round(r) and r.state_after
                       is not None and self.kinds.get(r.tool) == "state_change" and "after " not in r.reason), None)
        if change is None:
            return None, []
        idle: list[tuple[str, dict[str, Any]]] = []
        for r in self.rounds:
            refused = isinstance(r.observation, dict) and r.observation.get("success") is False and r.verdict != "fail"
            query = reached_round(r) and self.kinds.get(r.tool) == "query"
            if (refused or query) and "after " not in r.reason and (r.tool, r.args) not in idle:
                idle.append((r.tool, r.args))

        def run(first: tuple[str, dict[str, Any]]) -> tuple[CallOutcome, dict[str, Any]] | None:
            ep = open_episode(self.runtime, self.candidate, self.config)
            try:
                opening = ep.call(*first)
                idle_again = opening.ok and isinstance(opening.result, dict) and (
                    opening.result.get("success") is False or self.kinds.get(first[0]) == "query")
                if not idle_again:  # its probe ran after a setup, say, and here it did something else
                    return None
                before = ep.state
                return ep.call(change.tool, change.args), before
            finally:
                ep.close()

        return change, [(first, pool.submit(run, first)) for first in idle[:MAX_BEFORE_CHANGE]]

    def _judge_before_a_change(self, change: ValidationRound | None, started: list[Any]) -> None:
        """The first of those episodes, in the probes' order, whose state change left another state (only
        which attributes changed, and how often, when the class showed nondeterministic values)."""
        exact = not any("nondeterministic" in r.reason for r in self.rounds)
        broken = any(r.check == "sequence" for r in self.rounds)
        for first, future in started:
            try:
                done = future.result()
            except EnvLoadError:  # the config loaded before: nothing to judge about this call
                continue
            if done is None:
                continue
            out, before = done
            if broken or change is None or out.error_kind in ("timeout", "crash"):
                continue  # the sequence already said it, or its own probes judge that
            same = reached_outcome(out) and (_same_but_clock(out.state, change.state_after) if exact else
                                             _shape(before, out.state) == _shape(change.state_before or {}, change.state_after))
            if same:
                continue
            what = "a query" if self.kinds.get(first[0]) == "query" else "a refused call"
            reason = (f"{what} changed state later on: {change.tool} {change.args} right after {first[0]} {first[1]} left "
                      "another state, or gave another answer, than in a fresh episode; a change kept back, or left "
                      f"to a thread or a finaliser, showed up in {change.tool}'s diff")
            probe = Probe(tool=change.tool, args=change.args, case_type="positive", purpose="sequence",
                          note=f"after {first[0]}")
            self._record(probe, out, before, CallFacts(critical=[reason], changed=True), "sequence",
                         labels_decide=what == "a query")
            broken = True

    def _reach_after(self, plan: ToolPlan, tried: list[list[tuple[str, dict[str, Any]]]],
                     setups: list[list[tuple[str, dict[str, Any]]]], pool: ThreadPoolExecutor) -> bool:
        tries = [variant for setup in tried if plan.tool not in {t for t, _ in setup}
                 for probe in plan.positives()[:MAX_SETUP_POSITIVES]
                 for variant in self._with_setup(probe, setup)]
        for probe, (out, before, facts) in zip(tries, pool.map(self._execute, tries)):
            if out is None:
                continue
            if self._decisive(probe, out, before, facts):
                self._record(probe, out, before, facts, "contract")
                if facts.success is True and not facts.critical:
                    setups.append([*probe.setup, (probe.tool, facts.args or probe.args)])
                return True
            self._record(probe, out, before, facts, SEARCH)
        return False

    def _with_setup(self, probe: Probe, setup: list[tuple[str, dict[str, Any]]]) -> list[Probe]:
        """The probe after `setup`: first with the parameters a setup call returns a value for fed from
        that value in the same episode (a `login` that hands back a token the next tools take), then
        as planned. Which keys a setup call returns is read from the round that accepted it."""
        note = "after " + ", ".join(t for t, _ in setup)
        plain = probe.model_copy(update={"setup": setup, "note": note})
        returned = {key for tool, args in setup for r in self.rounds
                    if r.tool == tool and r.args == args and reached_round(r) for key in result_keys(r.observation)}
        fed = {param: key for param in probe.args for key in sorted(returned) if same_name(param, key)}
        if not fed:
            return [plain]
        return [probe.model_copy(update={"setup": setup, "fed": fed, "note": f"{note}, {', '.join(fed)} from its "
                                         "result"}), plain]

    def _tool(self, plan: ToolPlan, search_only: bool) -> tuple[list[_Record], list[Probe]]:
        """One tool's rounds (search, edges, missing records) in order, and its optional boundary probes."""
        records: list[_Record] = []
        base, stopped = self._search(plan, records)
        if stopped or search_only:
            return records, []
        for probe in [*plan.edges(base), *plan.missing(base)]:
            out, before, facts = self._execute(probe)
            if out is None:
                continue
            records.append((probe, out, before, facts, probe.purpose))
            if out.error_kind in ("timeout", "crash"):
                break
        return records, plan.boundaries(base)

    def _search(self, plan: ToolPlan, records: list[_Record]) -> tuple[dict[str, Any], bool]:
        """(arguments of the accepted positive, or of the first candidate; whether to stop probing)."""
        candidates = plan.positives()
        for probe in candidates:
            out, before, facts = self._execute(probe)
            if out is None:
                continue
            if self._decisive(probe, out, before, facts):
                records.append((probe, out, before, facts, "contract"))
                return probe.args, out.error_kind in ("timeout", "crash")
            refusal = _refusal(out)
            facts.warnings.append(f"positive probe of {plan.tool} refused ({refusal}); trying other values")
            records.append((probe, out, before, facts, SEARCH))
        return (candidates[0].args if candidates else {}), False

    def _decisive(self, probe: Probe, out: CallOutcome, before: dict[str, Any], facts: CallFacts) -> bool:
        """Did this positive reach the code (or break a contract)? A state change it made is replayed
        once from the same state, to catch nondeterminism, before it is recorded."""
        if not (facts.critical or facts.success is True):
            return False
        if facts.success is True and not facts.critical and facts.changed:
            critical, warnings = self._replay(probe, out, before)
            facts.critical += critical
            facts.warnings += warnings
        return True

    def _execute(self, probe: Probe) -> tuple[CallOutcome | None, dict[str, Any], CallFacts]:
        ep = open_episode(self.runtime, self.candidate, self.config)
        try:
            results = set_up(ep, probe)
            if results is None:
                return None, ep.state, CallFacts()  # the setup did not do again what it did before
            args = fed_args(probe, results)
            before = ep.state
            out = ep.call(probe.tool, args)
        finally:
            ep.close()
        if not out.ok and out.error_kind == "schema":
            return None, before, CallFacts()  # our own probe did not fit the schema: nothing learned
        facts = call_facts(out, before, self.kinds.get(probe.tool), probe.case_type)
        facts.args = args if probe.fed else None
        return out, before, facts

    def _record(self, probe: Probe, out: CallOutcome, before: dict[str, Any], facts: CallFacts, check: str,
                labels_decide: bool = False) -> None:
        # a query that changed state is judged under whichever labels hold (validate.py), not a breach yet
        if not labels_decide:
            self.breaches += [c for c in facts.critical if not c.startswith(query_changed(probe.tool))
                              and c not in self.breaches]
        reason = facts.reason if facts.reason != "ok" or not probe.note else f"ok ({probe.purpose}: {probe.note})"
        self.rounds.append(ValidationRound(
            candidate_fp=self.candidate.fingerprint, mode="programmatic", index=self.start + len(self.rounds),
            tool=probe.tool, args=facts.args or probe.args, case_type=probe.case_type, check=check,
            observation=observation(out),
            error=None if out.ok else out.error, state_before=before, state_after=out.state,
            state_diff=out.state_diff, verdict="fail" if facts.critical else "warning" if facts.warnings else "pass",
            reason=reason, elapsed_ms=out.elapsed_ms,
        ))

    def _replay(self, probe: Probe, first: CallOutcome, before: dict[str, Any]) -> tuple[list[str], list[str]]:
        """(critical, warnings) from re-running a successful state change on a fresh copy of the state."""
        ep = open_episode(self.runtime, self.candidate, self.config)
        try:
            results = set_up(ep, probe)
            if results is None:
                return [f"replay of {probe.tool}'s setup from the same state failed"], []
            again = ep.call(probe.tool, fed_args(probe, results))
        finally:
            ep.close()
        tool = probe.tool
        if not again.ok:
            return [f"replay of {tool} from the same state failed: {again.error_kind}"], []
        first_ok = isinstance(first.result, dict) and first.result.get("success")
        again_ok = isinstance(again.result, dict) and again.result.get("success")
        if first_ok != again_ok or _shape(before, first.state) != _shape(before, again.state):
            return [f"replay of {tool} from the same state behaved differently"], []
        if not (same_json(again.state, first.state) and same_json(again.result, first.result)):
            return [], [f"nondeterministic values in {tool} (same call, same state, different data)"]
        return [], []


def reached_outcome(out: CallOutcome) -> bool:
    return out.ok and isinstance(out.result, dict) and out.result.get("success") is True


def reached_round(r: ValidationRound) -> bool:
    return isinstance(r.observation, dict) and r.observation.get("success") is True


def _shape(before: dict[str, Any], after: dict[str, Any]) -> Counter[str]:
    """Which top-level attributes changed and how often: equal under harmless nondeterminism (new
    uuids, timestamps), different when a replay really did something else."""
    return Counter(p.split("/")[1] for p in changed_paths(before, after))


_CLOCK = re.compile(r"\d{4}-\d\d-\d\d|\d\d:\d\d")


def _same_but_clock(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """The same JSON, except for strings that read as a date or time on both sides: a class stamping its
    records with the time of day (to the second, which one replay may not show as nondeterministic)
    stamps them differently a fraction of a second later, and that is not a change kept back."""
    if same_json(a, b):
        return True
    for path in changed_paths(a, b):
        x, y = _at(a, path), _at(b, path)
        if not (isinstance(x, str) and isinstance(y, str) and _CLOCK.search(x) and _CLOCK.search(y)):
            return False
    return True


def _at(doc: Any, path: str) -> Any:
    for key in path.split("/")[1:]:
        if not isinstance(doc, dict) or key not in doc:
            return None
        doc = doc[key]
    return doc


def _refusal(out: CallOutcome) -> str:
    result = out.result if isinstance(out.result, dict) else {}
    text = str(result.get("error") or result.get("message") or "success is False")
    return text if len(text) <= 120 else text[:117] + "..."
