"""The env as the factory serves it, validated before any of its scenarios is promoted (red team sandbox-4 F4).

The import audit validates an env with EnvScaler's type markers restored (sets as sets: its faithful
form). The factory scenarios it promotes are served plain (the gym, MCP, rollouts and the RL export load
`env_execution_config`: sets as lists, datetimes as strings, the class's code without the adapter), so a
class can keep its contract only in the faithful form (`get_book` changing state when `self.vip` is a
list) and still earn rewards from the served one. Promotion replays only the reference solution, which
shows nothing of the kind. So before a scenario whose state holds markers is promoted, the env's tools
are validated in the served form too, on the flattened states of those scenarios (the first
`MAX_TEST_STATES` by content, as the audit chooses, get the full pass; every further one is swept for
contract breaches, `state_sweep`, since each is served: rt10-B F2); if any fails, none of them is promoted.
A scenario without markers is served exactly as it was audited and needs nothing more.
"""

from __future__ import annotations

import asyncio
from typing import Any

from envscaler_core.config import Settings
from envscaler_core.interop.envjob import MAX_TEST_STATES, _programmatic, test_states
from envscaler_core.interop.read import env_execution_config
from envscaler_core.interop.sandboxed import has_markers
from envscaler_core.models.env import EnvCandidate
from envscaler_core.runtime import EnvRuntime
from envscaler_core.validation import validate_candidate
from envscaler_core.validation.state_sweep import labels, sweep_breaches

SERVED_FORM = "its env is not accepted in the form the gym, MCP and the RL export serve it (markers flattened): "


def served_form_problem(candidate: EnvCandidate, configs: list[Any], runtime: EnvRuntime,
                        settings: Settings) -> str | None:
    """Why `candidate` (its own code, no marker adapter) fails validation on the flattened form of any of
    the marker-holding `configs`, or None (also when none holds a marker)."""
    states = test_states([c for c in configs if has_markers(c)], limit=None)
    kinds = labels(candidate) if len(states) > MAX_TEST_STATES else {}
    for k, config in enumerate(states):
        plain = env_execution_config(config)
        plain = plain if isinstance(plain, dict) else {}
        if k >= MAX_TEST_STATES:  # every further state is served too: its breaches (`state_sweep`), not coverage
            if breaches := sweep_breaches(candidate, runtime, plain, kinds, any_result=True):
                return "; ".join(breaches[:3])
            continue
        outcome = asyncio.run(validate_candidate(candidate, runtime, None, _programmatic(settings), test_state=plain,
                                                 any_result=True))  # EnvScaler's contract, as the audit
        report = outcome.report
        if outcome.failure or not report.accepted:
            return outcome.failure or "; ".join((report.critical or report.blocking or report.reasons)[:3])
    return None
