"""Spec: an `enum` (or `const`) in a tool schema costs one lookup per value, with JSON's type-strict
equality, its members are charged to the call's check budget, and no message carries a whole enum
(sandbox red team round 6, F1: membership was a linear scan counted as one step, and every failing
check built repr() of the whole enum, so a 20,000-member enum checked against 10,000 values held the
host for minutes)."""

from __future__ import annotations

import time
from typing import Any

from sandbox import SandboxPool
from sandbox.schema import MAX_CHECK_STEPS, MAX_PROBLEM_CHARS, check_call, index_tools
from tests.sandbox.test_schema_unions import CODE


TAGS = [f"a{i}" for i in range(20_000)]


def _tools(x: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"type": "function", "function": {"name": "f", "description": "f", "parameters": {
        "type": "object", "properties": {"x": x}}}}]


def test_a_large_enum_costs_one_lookup_per_value() -> None:
    index = index_tools(_tools({"type": "array", "items": {"enum": TAGS}}))
    started = time.process_time()
    assert check_call("f", {"x": ["a19999"] * 5_000}, index) is None
    assert time.process_time() - started < 1.0, "each value scanned the whole enum"


def test_a_value_outside_a_large_enum_is_named_without_the_whole_enum() -> None:
    index = index_tools(_tools({"type": "array", "items": {"anyOf": [{"enum": TAGS}, {"enum": TAGS[::-1]}]}}))
    started = time.process_time()
    problem = check_call("f", {"x": ["nope"] * 2_000}, index)
    assert time.process_time() - started < 1.0, "every failing check built repr() of the enum"
    assert problem is not None and len(problem) <= MAX_PROBLEM_CHARS
    assert "f.x[0]" in problem and "'nope' is not one of 20,000 values (['a0', 'a1', 'a2', ...])" in problem


def test_enum_membership_is_type_strict_at_every_level() -> None:
    index = index_tools(_tools({"enum": [1, "1", [1], {"a": [True]}]}))
    for allowed in (1, "1", [1], {"a": [True]}):
        assert check_call("f", {"x": allowed}, index) is None, allowed
    for refused in (1.0, True, [1.0], [True], {"a": [1]}, {"a": [True], "b": 1}):
        assert check_call("f", {"x": refused}, index) is not None, refused


def test_const_is_type_strict() -> None:
    index = index_tools(_tools({"const": {"k": [0]}}))
    assert check_call("f", {"x": {"k": [0]}}, index) is None
    assert check_call("f", {"x": {"k": [False]}}, index) == "f.x: must be {'k': [0]}"


def test_an_enum_past_the_check_budget_is_refused_naming_it() -> None:
    index = index_tools(_tools({"enum": list(range(MAX_CHECK_STEPS + 1))}))
    problem = check_call("f", {"x": 0}, index)
    assert problem is not None and "MAX_CHECK_STEPS" in problem


def test_an_episode_refuses_a_value_outside_a_large_enum_and_goes_on(sandbox_pool: SandboxPool) -> None:
    with sandbox_pool.open_episode(CODE, "E", {}, tools=_tools({"type": "array", "items": {"enum": TAGS}})) as ep:
        out = ep.call("f", {"x": ["a5"] * 1_000 + ["zz"]})
        assert (out.ok, out.error_kind) == (False, "schema")
        assert "f.x[1000]: 'zz' is not one of 20,000 values" in (out.error or "")
        assert ep.call("f", {"x": ["a19999"] * 1_000}).ok
