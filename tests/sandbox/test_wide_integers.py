"""Spec: integers wider than 64 bits (signed) are refused wherever a value enters the sandbox, naming where,
and an enum of integers chosen to share hash buckets costs what an ordinary one does (red team 7, F1/F8:
an enum of 10,000 multiples of 2^61-1, which all hash to 0, made every call cost the host time quadratic
in its size; a 25-digit amount reached the tool through `sandbox exec`, MCP and the gym)."""

from __future__ import annotations

from typing import Any

import pytest

from sandbox import SandboxPool
from sandbox.schema import ToolSpecError, _Checker, check_call, index_tools

CODE = '''
class E:
    def __init__(self, init_config=None):
        self.got = None

    def f(self, x=None) -> dict:
        """f"""
        self.got = repr(type(x))
        return {"success": True, "data": 1}
'''
P = (1 << 61) - 1  # an int's hash is its value modulo this


def _tools(x: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"type": "function", "function": {"name": "f", "description": "f", "parameters": {
        "type": "object", "properties": {"x": x}}}}]


def test_a_schema_enum_wider_than_64_bits_is_refused_naming_where() -> None:
    with pytest.raises(ToolSpecError, match=r"tools\[0\] \(f\)\.parameters/properties/x/enum/5: integer of 64 bits"):
        index_tools(_tools({"enum": [k * P for k in range(10)]}))


def test_a_schema_bound_wider_than_64_bits_is_refused() -> None:
    with pytest.raises(ToolSpecError, match="properties/x/maximum: .*64-bit range"):
        index_tools(_tools({"type": "integer", "maximum": 10**30}))


def test_the_integers_that_share_one_hash_within_64_bits_get_keys_that_do_not() -> None:
    """Within 64 bits at most nine integers share a hash (k * (2^61-1), k in -4..4); their membership keys
    must not, so an enum of them costs what an ordinary one does: one probe per member, not a bucket scan."""
    sharing = [k * P for k in range(-4, 5)]
    assert len({hash(m) for m in sharing}) == 1  # what the enum's author can aim at
    checker = _Checker()
    assert len({hash(checker._key(m)) for m in sharing}) == len(sharing)
    ordinary = list(range(9))
    assert len({hash(checker._key(m)) for m in ordinary}) == len(ordinary)


def test_the_largest_64_bit_integers_still_match_their_enum() -> None:
    members = [(1 << 63) - 1, -(1 << 63), 4 * P, -4 * P, 0]
    index = index_tools(_tools({"type": "array", "items": {"enum": members}}))
    assert check_call("f", {"x": list(members)}, index) is None
    assert check_call("f", {"x": [1]}, index) is not None
    assert check_call("f", {"x": [True]}, index_tools(_tools({"items": {"enum": [1]}}))) is not None


def test_an_argument_wider_than_64_bits_never_reaches_the_tool(sandbox_pool: SandboxPool) -> None:
    with sandbox_pool.open_episode(CODE, "E", {}) as ep:
        out = ep.call("f", {"x": {"amount": [1, 1111111111111111111111111]}})
        assert not out.ok and out.error_kind == "schema"
        assert "f/x/amount/1: integer of 80 bits is outside the 64-bit range" in (out.error or "")
        wide = ep.call("f", {"x": 10**4000})
        assert not wide.ok and "f/x: integer of 13,288 bits" in (wide.error or "")
        assert ep.state["got"] is None
        ok = ep.call("f", {"x": (1 << 63) - 1})
        assert ok.ok and ep.state["got"] == "<class 'int'>"
