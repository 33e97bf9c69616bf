"""Stage 3 (validate): execute candidate classes in the sandbox and decide which become environments."""

from envscaler_core.validation.facts import CallFacts, call_facts, changed_paths
from envscaler_core.validation.probes import Probe, ToolPlan, plan_tools
from envscaler_core.validation.programmatic import ProgrammaticPass, observation
from envscaler_core.validation.report import summarize
from envscaler_core.validation.tool_kinds import classify_tools
from envscaler_core.validation.validate import (
    ValidationOutcome, label_tools, load_state, make_test_state, validate_candidate,
)

__all__ = [
    "CallFacts", "Probe", "ProgrammaticPass", "ToolPlan", "ValidationOutcome", "call_facts", "changed_paths",
    "classify_tools", "label_tools", "load_state", "make_test_state", "observation", "plan_tools", "summarize",
    "validate_candidate",
]
