"""Stage 2 (synthesize): an environment topic becomes one checked Python class with tool schemas.

The pipeline (and with it the mining steps and numpy) is imported lazily: `envscaler validate`, the
import audit and the sandbox's callers need only the schema and static checks, and the CLI is started
hundreds of times by the suite and by users' scripts.
"""

from typing import Any

from envscaler_core.synth.assembly import AssemblyError, assemble_module, parse_method, strip_fences
from envscaler_core.synth.static_checks import StaticProblem, static_problems
from envscaler_core.synth.tool_schema import (
    SchemaError, class_header, extract_tools, method_sources, state_attributes, tool_lines,
)

__all__ = [
    "AssemblyError", "SchemaError", "StaticProblem", "StepLog", "SynthResult", "assemble_module",
    "class_header", "extract_tools", "method_sources", "parse_method", "state_attributes",
    "static_problems", "strip_fences", "synthesize_env", "tool_lines",
]


def __getattr__(name: str) -> Any:
    if name in ("StepLog", "SynthResult", "synthesize_env"):
        from envscaler_core.synth import pipeline

        return getattr(pipeline, name)
    raise AttributeError(f"module 'envscaler_core.synth' has no attribute {name!r}")
