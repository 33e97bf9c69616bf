"""Spec: the judge's view of a class is the class without its tools (the same for every call) plus the
called tool and every tool it calls itself, so it can follow the code the call ran without being sent
the whole class on every round."""

from __future__ import annotations

import ast

from envscaler_core.validation.code_slices import CodeSlices
from mock_llm import library

CODE = '''
import re

LIMIT = 3  # module constants stay


class Shop:
    """A shop."""

    currency = "EUR"

    def __init__(self, init_config: dict | None = None):
        cfg = init_config or {}
        self.orders = cfg.get("orders", {})

    def _valid(self, order_id: str) -> bool:
        return bool(re.fullmatch(r"O-\\d+", order_id))

    @property
    def count(self) -> int:
        return len(self.orders)

    def get_order(self, order_id: str) -> dict:
        """Get one order."""
        if not self._valid(order_id) or order_id not in self.orders:
            return {"success": False, "error": "no such order"}
        return {"success": True, "data": self.orders[order_id]}

    def cancel_order(self, order_id: str) -> dict:
        """Cancel an order."""
        found = self.get_order(order_id)
        if not found["success"]:
            return found
        self.orders[order_id]["status"] = "cancelled"
        return {"success": True, "message": "cancelled"}

    def cancel_all(self) -> dict:
        """Cancel every order."""
        for order_id in list(self.orders):
            self.cancel_order(order_id)
        return {"success": True, "message": "all cancelled"}
'''


def test_the_shared_part_keeps_everything_but_the_tools():
    shared = CodeSlices(CODE, "Shop").shared
    for kept in ("import re", "LIMIT = 3", "currency", "def __init__", "def _valid", "def count"):
        assert kept in shared
    for cut in ("def get_order", "def cancel_order", "def cancel_all"):
        assert cut not in shared
    ast.parse(shared)  # still a module a reader can follow


def test_a_tool_comes_with_every_tool_it_calls_transitively():
    slices = CodeSlices(CODE, "Shop")
    assert "def get_order" in slices.tool("get_order") and "def cancel_order" not in slices.tool("get_order")
    whole = slices.tool("cancel_all")
    assert whole.startswith("    def cancel_all") and "def cancel_order" in whole and "def get_order" in whole


def test_an_unknown_or_private_name_has_no_code():
    slices = CodeSlices(CODE, "Shop")
    assert slices.tool("nope") == "" and slices.tool("_valid") == ""


def test_shared_part_and_tools_together_hold_every_line_of_each_library_class():
    for domain in library.domains():
        slices = CodeSlices(domain.class_source, domain.class_name)
        tools = "".join(slices.tool(name) for name in domain.tool_kinds)
        lines = {line for line in (slices.shared + tools).splitlines() if line.strip()}
        assert {line for line in domain.class_source.splitlines() if line.strip()} <= lines
