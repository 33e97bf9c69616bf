"""The programmatic pass: probes from `probes.ToolPlan`, each in a fresh sandbox episode loaded from the
test state (the config, exactly as a scenario would load it), verdicts from contract facts alone.

Per tool: positive candidates are tried until the env accepts one (each refusal is kept as an
uncounted `search` round: it shows what was tried, and a refusal that still changed state is a fact
like any other); then edge records, a missing id and out-of-range numbers. A state-changing success is
replayed once from the same state to catch nondeterminism. A tool that times out or crashes is not
probed further (each further probe would only wait for the same limit again).
"""

from __future__ import annotations

import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from envscaler_core.json_equal import same_json
from envscaler_core.models.env import EnvCandidate
from envscaler_core.models.validation import ValidationRound
from envscaler_core.runtime import CallOutcome, EnvRuntime, Episode
from envscaler_core.validation.class_effects import ClassEffects
from envscaler_core.validation.facts import CallFacts, call_facts, changed_paths, query_changed
from envscaler_core.validation.probes import Probe, ToolPlan, plan_tools
from envscaler_core.validation.sequence import SequenceChecks, reached_round
from envscaler_core.validation.setup_calls import fed_args, result_keys, same_name, set_up
from envscaler_core.validation.state_match import Path, volatile_paths

SEARCH = "search"  # a refused positive attempt: shown, never counted
PROBE_THREADS = 4  # probes of different tools at once; each waits on its own sandbox episode
MAX_SETUPS = 6  # setups (other tools' state changes) tried before a state-changing tool no probe reached
SETUP_VARIANTS = 2  # ... per tool: its accepted call and its next positive
MAX_SETUP_POSITIVES = 2  # ... with its best positive candidates
MAX_SETUP_DEPTH = 3  # rounds of that, each able to start from a tool the round before reached
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


class ProgrammaticPass(SequenceChecks):
    def __init__(self, candidate: EnvCandidate, runtime: EnvRuntime, config: dict[str, Any],
                 kinds: dict[str, str], start: int = 0, limit: int | None = None,
                 effects: ClassEffects | None = None, hints: dict[str, list[dict[str, Any]]] | None = None,
                 any_result: bool = False) -> None:
        self.candidate, self.runtime, self.config, self.kinds = candidate, runtime, config, kinds
        self.hints = hints or {}  # per tool, argument sets meant for it (`validate_candidate`)
        self.any_result = any_result  # EnvScaler's contract: a non-dict result is no breach (`facts.call_facts`)
        self.start, self.limit = start, limit
        # parsed here, on the caller's thread: CPython 3.11's ast.parse is not safe to run in two
        # threads at once ("AST constructor recursion depth mismatch"), and run() goes to a worker
        self.effects = effects if effects is not None else class_effects(candidate)
        self.rounds: list[ValidationRound] = []
        self.volatile: dict[str, set[Path]] = {}
        """Per state-changing tool, the paths at which its replay from the same state differed."""
        self.started = time.monotonic()
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
        plans = plan_tools(tools, loaded_state, self.effects, self.hints)
        with ThreadPoolExecutor(PROBE_THREADS, thread_name_prefix="probes") as pool:
            optional: list[Probe] = []
            for records, boundaries in pool.map(lambda plan: self._tool(plan, search_only), plans):
                for record in records:
                    self._record(*record)
                optional += boundaries
            self._after_setup(plans, pool)  # before the optional boundaries: coverage decides acceptance
            done = 0
            while done < len(optional) and (self.limit is None or self.counted() < self.limit):
                room = len(optional) - done if self.limit is None else self.limit - self.counted()
                window = optional[done:done + min(room, PROBE_THREADS)]
                for probe, (out, before, facts) in zip(window, pool.map(self._execute, window)):
                    if out is not None:  # the window fits the room left, so the limit is never passed
                        self._record(probe, out, before, facts, "boundary")
                done += len(window)
            if only is None and not search_only:  # after the boundaries: their refusals are idle calls too
                pending = self._before_a_change(pool)  # its episodes run beside the sequence's
                self._sequence()
                self._judge_before_a_change(pending)
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
        """One tool's rounds (search, edges, optional parameters, missing records) in order, and its
        optional boundary probes."""
        records: list[_Record] = []
        base, stopped = self._search(plan, records)
        if stopped or search_only:
            return records, []
        for probe in [*plan.edges(base), *plan.optionals(base), *plan.missing(base)]:
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
        facts = call_facts(out, before, self.kinds.get(probe.tool), probe.case_type, any_result=self.any_result)
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
            self.volatile.setdefault(tool, set()).update(volatile_paths(first.state, again.state))
            return [], [f"nondeterministic values in {tool} (same call, same state, different data)"]
        return [], []


def _shape(before: dict[str, Any], after: dict[str, Any]) -> Counter[str]:
    """Which top-level attributes changed and how often: a replay that changed other attributes, or
    some more often, did something else (not a new uuid or a timestamp)."""
    return Counter(p.split("/")[1] for p in changed_paths(before, after))


def _refusal(out: CallOutcome) -> str:
    result = out.result if isinstance(out.result, dict) else {}
    text = str(result.get("error") or result.get("message") or "success is False")
    return text if len(text) <= 120 else text[:117] + "..."
