"""Contract breaches of a class on one more state, in one sandbox episode.

The programmatic pass (`programmatic.py`) proves a class on a state: coverage, setups, replays and
sequences, each probe in a fresh episode (about a second of sandbox work per state for a dozen tools).
Once a class has earned acceptance on some states, what another state can still show is a *breach*: a
query, or a call that reports failure, that changes the state there (a `get_book` that files a fee report
only when the book is lost), an exception escaping a tool, a result that is not a dict with a boolean
`success`. The sweep makes the pass's own planned calls (positives up to the first accepted one, then the
edges, optional parameters, missing ids and boundaries around it) one after another in a single episode
loaded from the state, and judges each call on the state it met (`facts.call_facts`). A state change
accepted earlier in the episode only moves later calls onto another state of the same class, where the
contract holds just the same; a call that times out or crashes ends the episode, and the sweep goes on
with the next tool in a fresh one.

The state is swept exactly as it is served, config keys named like a method of the class included
(`shadowed`; EnvScaler's loader sets them over the method, and so does ours, unless the constructor pops
them): every tool is called, a shadowed one answers that it is no method (the gym, MCP and rollouts end
the episode at such a call, reward 0, as EnvScaler's runtime does), one whose key the constructor popped
runs (rt12-B F2: the sweep skipped it, and the popped key armed it), and a call that raises there having
changed nothing ends the episode without
being a breach (a tool calling a shadowed helper raises on the data, not on the class: rt10-C F4). Such a
state is swept under the rules it is served with (EnvScaler's for an import: a raising call's writes stay),
and a state change is still a breach, raised or not: a constructor may read such a key
(`"_audit" in init_config`) and arm a defect only there (rt11-B F1), also one that writes, then raises.
"""

from __future__ import annotations

import asyncio
from typing import Any

from envscaler_core.models.env import EnvCandidate
from envscaler_core.runtime import EnvLoadError, EnvRuntime, Episode, EpisodeBreach
from envscaler_core.validation.facts import call_facts
from envscaler_core.validation.probes import Probe, plan_tools
from envscaler_core.validation.programmatic import class_effects, open_episode
from envscaler_core.validation.validate import label_tools


def labels(candidate: EnvCandidate) -> dict[str, str]:
    """The tools' query/state_change labels the programmatic pass judges under (the spec's, else inferred)."""
    found = asyncio.run(label_tools(candidate, None, "programmatic", candidate.class_name))
    return {name: label.kind for name, label in found.items()}


def sweep_breaches(candidate: EnvCandidate, runtime: EnvRuntime, config: dict[str, Any],
                   kinds: dict[str, str], shadowed: frozenset[str] = frozenset(), rules: str = "factory",
                   any_result: bool = False) -> list[str]:
    """The contract breaches (validation's critical facts) the planned calls of every tool show on
    `config`, in one episode (another one after a call that ended it); `kinds` labels the tools;
    `shadowed`: the methods a key of `config` is set over (module docstring); `rules`: the episode rules the
    env is served under, which such a state is swept with (under EnvScaler's, what a raising call wrote stays,
    so the sweep sees it); `any_result`: EnvScaler's contract, where a result need not be a dict (an import)."""
    breaches: list[str] = []
    raised_ends = bool(shadowed)
    try:
        ep: Episode | None = _open(runtime, candidate, config, rules if shadowed else "factory")
        assert ep is not None
        plans = plan_tools(candidate.tools, ep.state, class_effects(candidate))
        for plan in plans:
            if ep is None:
                ep = _open(runtime, candidate, config, rules if shadowed else "factory")
            positives = plan.positives()
            base: dict[str, Any] | None = None
            for probe in positives:
                facts, ended = _call(ep, probe, kinds, breaches, raised_ends, any_result)
                if ended or (facts is not None and facts.success is True):
                    base = probe.args
                    break
            else:
                ended = False
            if ended:
                ep.close()
                ep = None
                continue
            base = base if base is not None else (positives[0].args if positives else {})
            for probe in [*plan.edges(base), *plan.optionals(base), *plan.missing(base), *plan.boundaries(base)]:
                if _call(ep, probe, kinds, breaches, raised_ends, any_result)[1]:
                    ep.close()
                    ep = None
                    break
        if ep is not None:
            ep.close()
    except EnvLoadError as exc:
        breaches.append(f"the class did not load again from a state it loaded from before: {exc}")
    except EpisodeBreach as exc:
        breaches.append(f"the env's process forged replies to the sandbox: {exc}")
    return breaches


def _open(runtime: EnvRuntime, candidate: EnvCandidate, config: dict[str, Any], rules: str) -> Episode:
    if rules == "factory":
        return open_episode(runtime, candidate, config)
    return runtime.open_episode(candidate.class_code, candidate.class_name, config,
                                tools=[t.model_dump() for t in candidate.tools], rules=rules)


def _call(ep: Episode, probe: Probe, kinds: dict[str, str], breaches: list[str],
          raised_ends: bool = False, any_result: bool = False) -> tuple[Any, bool]:
    """(the call's facts, or None when our own probe did not fit the schema; whether the call ended the
    episode). New breaches are added to `breaches`; with `raised_ends`, a call that raised and changed nothing
    only ends it (one that wrote before raising is judged: EnvScaler keeps what it wrote); with `any_result`, a
    result that is not a dict is no breach (EnvScaler's contract: `facts.call_facts`)."""
    before = ep.state
    out = ep.call(probe.tool, probe.args)
    if not out.ok and out.error_kind == "schema":
        return None, False
    if raised_ends and not out.ok and out.error_kind == "exception" and ep.state == before:
        return None, True
    facts = call_facts(out, before, kinds.get(probe.tool), probe.case_type, any_result=any_result)
    breaches += [c for c in facts.critical if c not in breaches]
    return facts, out.error_kind in ("timeout", "crash")
