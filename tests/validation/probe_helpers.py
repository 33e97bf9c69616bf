"""Helpers for the probe specs: one class's probe plans on a state, and its programmatic validation there."""

from __future__ import annotations

import asyncio
from typing import Any

from envscaler_core.config import load_settings
from envscaler_core.interop.sandboxed import with_markers_restored
from envscaler_core.models.env import EnvCandidate
from envscaler_core.synth import extract_tools
from envscaler_core.validation import plan_tools, validate_candidate
from envscaler_core.validation.class_effects import ClassEffects


def plans_by_tool(code: str, name: str, state: dict[str, Any]) -> dict[str, Any]:
    """The probe plan of each tool of class `name` on `state`, by tool name."""
    return {p.tool: p for p in plan_tools(extract_tools(code, name), state, ClassEffects(code, name))}


def validate_programmatically(code: str, name: str, state: dict[str, Any], runtime: Any) -> Any:
    """A real programmatic validation of class `name` on `state` (markers restored, as the import does)."""
    settings = load_settings(environ={}, overrides={"validate": {"mode": "programmatic"}})
    candidate = EnvCandidate(topic_fp="spec", class_name=name, class_code=code, tools=extract_tools(code, name))
    candidate, state = with_markers_restored(candidate, state, always=True)
    return asyncio.run(validate_candidate(candidate, runtime, None, settings, test_state=state))
