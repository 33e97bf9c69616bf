"""Stage 4: scenarios with verified rewards (see docs/scenarios_and_rollouts.md)."""

from envscaler_core.scenarios.generate import generate_scenarios, repair
from envscaler_core.scenarios.states import StateRejected, check_state, probe_calls
from envscaler_core.scenarios.verify import (
    CheckDiagnostic, SolutionStep, VerificationReport, execute_plan, score_checks, verify_scenario,
)

__all__ = [
    "CheckDiagnostic", "SolutionStep", "StateRejected", "VerificationReport", "check_state", "execute_plan",
    "generate_scenarios", "probe_calls", "repair", "score_checks", "verify_scenario",
]
