"""Spec: the host's argument check reads `oneOf` as JSON Schema does (exactly one branch matches) and
costs time bounded by the call and its schema, refusing past a documented limit (sandbox red team
round 5, F6: a value matching both branches of a `oneOf` was accepted, and nested unions of shared
branches were checked 2^depth times)."""

from __future__ import annotations

import time
from typing import Any

from sandbox import SandboxPool
from sandbox.schema import MAX_CHECK_STEPS, check_call, index_tools

CODE = '''
class E:
    def __init__(self, init_config=None):
        self.n = 0

    def f(self, x=None) -> dict:
        """f"""
        return {"success": True, "data": 1}
'''


def _tools(x: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"type": "function", "function": {"name": "f", "description": "f", "parameters": {
        "type": "object", "properties": {"x": x}}}}]


def _nested(key: str, depth: int) -> dict[str, Any]:
    """Each level a union of two identical array branches sharing one schema object (the checker's)."""
    schema: dict[str, Any] = {"type": "integer"}
    for _ in range(depth):
        schema = {key: [{"type": "array", "items": schema}, {"type": "array", "items": schema}]}
    return schema


def _deep(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = [value]
    return value


ONE_OF = {"oneOf": [{"type": "integer"}, {"type": "number"}]}  # an integer is a number too


def test_a_value_matching_two_branches_of_one_of_is_refused() -> None:
    problem = check_call("f", {"x": 3}, index_tools(_tools(ONE_OF)))
    assert problem == "f.x: matches 2 branches of oneOf (#0, #1); oneOf allows exactly one"


def test_a_value_matching_one_branch_of_one_of_passes() -> None:
    assert check_call("f", {"x": 2.5}, index_tools(_tools(ONE_OF))) is None


def test_a_value_matching_two_branches_of_any_of_passes() -> None:
    assert check_call("f", {"x": 3}, index_tools(_tools({"anyOf": ONE_OF["oneOf"]}))) is None


def test_nested_unions_of_shared_branches_are_checked_in_linear_time() -> None:
    index = index_tools(_tools(_nested("anyOf", 24)))
    started = time.process_time()
    assert check_call("f", {"x": _deep(24)}, index) is None
    assert check_call("f", {"x": _deep(23)}, index) is not None
    assert time.process_time() - started < 1.0, "2^24 checks: the union's branches were not remembered"


def test_a_call_past_the_check_budget_is_refused_naming_it() -> None:
    index = index_tools(_tools({"type": "array", "items": {"type": "array", "items": {"type": "integer"}}}))
    problem = check_call("f", {"x": [[1] * 100] * (MAX_CHECK_STEPS // 100)}, index)
    assert problem is not None and "MAX_CHECK_STEPS" in problem and f"{MAX_CHECK_STEPS:,} steps" in problem


def test_an_episode_refuses_an_ambiguous_one_of_argument_and_goes_on(sandbox_pool: SandboxPool) -> None:
    with sandbox_pool.open_episode(CODE, "E", {}, tools=_tools(_nested("oneOf", 10))) as ep:
        out = ep.call("f", {"x": _deep(10)})
        assert (out.ok, out.error_kind) == (False, "schema")
        assert "oneOf allows exactly one" in (out.error or "")
        assert ep.call("f", {}).ok


def test_a_schema_sharing_one_sub_schema_between_branches_is_indexed_once_per_object() -> None:
    """The 64-bit walk of a tool schema (red team 7) followed every path through shared sub-schemas: a 24-level
    union of two branches sharing one schema took 2^24 steps (117 s in CI). At 60 levels that would never end."""
    index = index_tools(_tools(_nested("anyOf", 60)))
    assert check_call("f", {"x": _deep(60)}, index) is None
