"""Stage 2 (synthesize): an environment topic becomes one checked Python class with tool schemas."""

from envscaler_core.synth.assembly import AssemblyError, assemble_module, parse_method, strip_fences
from envscaler_core.synth.pipeline import StepLog, SynthResult, synthesize_env
from envscaler_core.synth.static_checks import StaticProblem, static_problems
from envscaler_core.synth.tool_schema import (
    SchemaError, class_header, extract_tools, method_sources, state_attributes, tool_lines,
)

__all__ = [
    "AssemblyError", "SchemaError", "StaticProblem", "StepLog", "SynthResult", "assemble_module",
    "class_header", "extract_tools", "method_sources", "parse_method", "state_attributes",
    "static_problems", "strip_fences", "synthesize_env", "tool_lines",
]
