"""Stage 3 (validate): execute candidate classes in the sandbox and decide which become environments."""

from envscaler_core.validation.facts import CallFacts, call_facts, changed_paths
from envscaler_core.validation.probes import Probe, probes_for
from envscaler_core.validation.validate import (
    ValidationOutcome, make_test_state, observation, run_programmatic, summarize, validate_candidate,
)

__all__ = [
    "CallFacts", "Probe", "ValidationOutcome", "call_facts", "changed_paths", "make_test_state", "observation",
    "probes_for", "run_programmatic", "summarize", "validate_candidate",
]
