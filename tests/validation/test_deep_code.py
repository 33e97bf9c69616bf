"""Spec: a class Python compiles is either analysed or refused with a reason naming the depth limit
(`pyast.MAX_NESTING`), never called "does not compile" (sandbox red team round 6, F2: a 2,000-term `+`
chain that Python compiles was refused as "nested too deeply for Python's parser", because a recursion
limit hit by the host's own tree walks, from the CLI's deeper stack, was read as a compile failure)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from envscaler_core import pyast
from envscaler_core.synth import static_problems

ROOT = Path(__file__).resolve().parents[2]


def _chain_class(terms: int) -> str:
    expr = "+".join(["1"] * terms)
    return f'''class Counter:
    def __init__(self, init_config=None):
        self.items = dict((init_config or {{}}).get("items", {{}}))

    def get_item(self, item_id: str) -> dict:
        """Get an item by id."""
        if item_id not in self.items:
            return {{"success": False, "error": "no such item"}}
        return {{"success": True, "data": self.items[item_id]}}

    def count_items(self) -> dict:
        """Count the items."""
        x = {expr}
        return {{"success": True, "data": len(self.items) + x - x}}
'''


def _validate(tmp_path: Path, terms: int) -> subprocess.CompletedProcess[str]:
    code, state = tmp_path / f"chain_{terms}.py", tmp_path / "state.json"
    code.write_text(_chain_class(terms))
    state.write_text(json.dumps({"items": {"i1": {"name": "a"}, "i2": {"name": "b"}}}))
    return subprocess.run([sys.executable, "-m", "envscaler.cli", "validate", "--code", str(code), "--state",
                           str(state), "--mode", "programmatic", "--text"], cwd=ROOT, capture_output=True, text=True,
                          timeout=300, env={**os.environ, "HOME": str(tmp_path)})


def test_a_chain_python_compiles_but_past_the_limit_is_refused_naming_the_limit(tmp_path: Path) -> None:
    compile(_chain_class(2_000), "chain", "exec")  # Python itself takes it
    done = _validate(tmp_path, 2_000)
    assert done.returncode == 2 and "does not compile" not in done.stderr, done.stderr
    assert f"nested 2,004 levels deep, past the {pyast.MAX_NESTING} levels" in done.stderr
    assert "pyast.MAX_NESTING" in done.stderr and "Python may compile it" in done.stderr


def test_a_chain_within_the_limit_is_validated_from_the_cli(tmp_path: Path) -> None:
    done = _validate(tmp_path, pyast.MAX_NESTING - 10)
    assert done.returncode in (0, 1) and done.stdout.startswith(("ACCEPTED", "REJECTED")), done.stderr


def test_static_checks_name_the_depth_limit() -> None:
    problems = static_problems(_chain_class(1_000), "Counter")
    assert [p.name for p in problems] == ["code-too-deep"]
    assert "pyast.MAX_NESTING" in problems[0].detail


def test_a_parse_from_a_deep_call_stack_is_refused_naming_the_limit_not_a_recursion_error() -> None:
    source = _chain_class(2_500)

    def nested(frames: int) -> None:
        if frames:
            nested(frames - 1)
        else:
            pyast.parse(source)

    with pytest.raises(pyast.NestedTooDeep, match="pyast.MAX_NESTING"):
        nested(sys.getrecursionlimit() - 200)
