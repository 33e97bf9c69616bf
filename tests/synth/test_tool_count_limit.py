"""Spec: a class with more tools than `static_checks.MAX_TOOLS` is refused by the static checks, naming the
limit, before anything runs (sandbox red team round 6, F7: no limit; 500 trivial tools took 35 s to
validate, about 70 ms a tool, and the source-size limit allows ~6,000)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from envscaler_core.synth import static_problems
from envscaler_core.synth.static_checks import MAX_TOOLS

ROOT = Path(__file__).resolve().parents[2]


def _many_tools(tools: int) -> str:
    methods = "".join(f'''
    def get_b{i}(self) -> dict:
        """Get b{i}."""
        return {{"success": True, "data": {i}}}
''' for i in range(tools))
    return f'''class Many:
    def __init__(self, init_config=None):
        self.n = (init_config or {{}}).get("n", 0)
{methods}'''


def test_a_class_past_the_tool_limit_is_refused_naming_it() -> None:
    problems = static_problems(_many_tools(MAX_TOOLS + 1), "Many")
    assert [p.name for p in problems] == ["too-many-tools"]
    assert f"has {MAX_TOOLS + 1} public methods (tools), past the {MAX_TOOLS}" in problems[0].detail
    assert "MAX_TOOLS" in problems[0].detail


def test_a_class_at_the_tool_limit_passes_the_static_checks() -> None:
    assert static_problems(_many_tools(MAX_TOOLS), "Many") == []


def test_validate_refuses_a_class_past_the_tool_limit_before_running_it(tmp_path: Path) -> None:
    code, state = tmp_path / "many.py", tmp_path / "state.json"
    code.write_text(_many_tools(MAX_TOOLS * 3))
    state.write_text(json.dumps({"n": 1}))
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "envscaler.cli", "validate", "--code", str(code), "--state", str(state),
                           "--mode", "programmatic", "--text"], cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "HOME": str(tmp_path)})
    assert done.returncode == 2 and "too-many-tools" in done.stderr and "MAX_TOOLS" in done.stderr, done.stderr
    assert time.monotonic() - started < 20, "the class was run before being refused"
