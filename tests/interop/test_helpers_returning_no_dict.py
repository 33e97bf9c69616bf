"""Spec: an imported env's public helper that returns no dict (`is_valid_isbn(isbn) -> bool`, `stock_titles() ->
List[str]`) is judged by EnvScaler's contract, which has no dict-return rule: the env is accepted, and a call to the
helper is observed as its value (`true`, `["Emma", "Ulysses"]`, as JSON: EnvScaler shows `str()` of it) while the
episode goes on; a synthesized env keeps the factory's contract, where such a result is a breach (outside check
rt22-R13, F4: the whole env was rejected, "is_valid_isbn returned bool, not a dict").

Expected values are EnvScaler's own: its runtime (`EnvScalerNonConvRLEnv`) plays the reference solution 1.0, and a
trajectory calling `is_valid_isbn` (observed `True`) and `stock_titles` before the sale 1.0 too."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from envscaler_core.config import load_settings
from envscaler_core.gym import load_rl_set
from envscaler_core.models.env import EnvCandidate
from envscaler_core.synth import extract_tools
from envscaler_core.validation import validate_candidate
from tests.interop.conftest import import_one_env

CODE = '''from typing import Dict, List


class Bookshop:
    def __init__(self, init_config: dict):
        self.stock: Dict[str, dict] = {}
        self.sales: List[dict] = []

    def is_valid_isbn(self, isbn: str) -> bool:
        """Check whether an ISBN is well formed."""
        return isinstance(isbn, str) and len(isbn) == 4

    def stock_titles(self) -> List[str]:
        """List the titles in stock."""
        return sorted(b["title"] for b in self.stock.values())

    def sell_book(self, isbn: str, qty: int = 1) -> dict:
        """Sell copies of a book."""
        if not self.is_valid_isbn(isbn) or isbn not in self.stock:
            return {"success": False, "error": "bad isbn"}
        if qty < 1 or self.stock[isbn]["copies"] < qty:
            return {"success": False, "error": "bad qty"}
        self.stock[isbn]["copies"] -= qty
        self.sales.append({"isbn": isbn, "qty": qty})
        return {"success": True, "message": "sold"}
'''
STATE = {"stock": {"1234": {"title": "Emma", "copies": 3}, "5678": {"title": "Ulysses", "copies": 1}}, "sales": []}


def _tool(name: str, props: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "description": name, "parameters": {
        "type": "object", "properties": props, "required": required}}}


ENV = {"env_id": "env_shop", "environment_introduction": "A bookshop.", "constraints_rules": [],
       "env_class_name": "Bookshop", "env_class_code": CODE,
       "tools": [_tool("is_valid_isbn", {"isbn": {"type": "string"}}, ["isbn"]), _tool("stock_titles", {}, []),
                 _tool("sell_book", {"isbn": {"type": "string"}, "qty": {"type": "integer"}}, ["isbn", "qty"])],
       "operation_list": [{"operation_name": "is_valid_isbn", "operation_type": "query"},
                          {"operation_name": "stock_titles", "operation_type": "query"},
                          {"operation_name": "sell_book", "operation_type": "state_change"}]}
SELL = {"env_id": "env_shop", "env_class_name": "Bookshop", "task_id": "h1", "init_config": STATE,
        "task": "Sell two copies of 1234.", "checklist": ["copies"],
        "checklist_with_func": [{"check_item": "copies", "check_func": (
            "def check_func(final_state):\n    return final_state['stock']['1234']['copies'] == 1")}]}
SOLUTION = [{"name": "sell_book", "arguments": {"isbn": "1234", "qty": 2}}]


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory, sandbox_pool: Any) -> dict[str, Any]:
    return import_one_env(tmp_path_factory.mktemp("helpers"), ENV, [SELL], {"h1": SOLUTION}, sandbox_pool, "hp",
                          rl_export=True)


def test_the_env_is_accepted_and_its_scenario_verified(imported: dict[str, Any]) -> None:
    assert [(e.status, e.reasons) for e in imported["envs"]] == [("accepted", [])]
    assert [s.audit for s in imported["scenarios"]] == ["verified"]


def test_a_helpers_value_is_observed_and_the_episode_goes_on(imported: dict[str, Any]) -> None:
    (gym,) = load_rl_set(imported["rl"], imported["pool"])
    try:
        gym.reset(options={"scenario_index": 0})
        checked = gym.step({"tool": "is_valid_isbn", "args": {"isbn": "1234"}})
        titles = gym.step({"tool": "stock_titles", "args": {}})
        gym.step({"tool": "sell_book", "args": {"isbn": "1234", "qty": 2}})
        reward = gym.step({"tool": "chat_with_user", "args": {"content": "Task Completed"}})[1]
    finally:
        gym.close()
    assert (json.loads(checked[0]), checked[2], checked[4]["is_error"]) == (True, False, False)
    assert json.loads(titles[0]) == ["Emma", "Ulysses"] and reward == 1.0


def test_a_synthesized_env_keeps_the_dict_return_contract(sandbox_pool: Any) -> None:
    settings = load_settings(environ={}, overrides={"validate": {"mode": "programmatic"}})
    candidate = EnvCandidate(topic_fp="spec", class_name="Bookshop", class_code=CODE,
                             tools=extract_tools(CODE, "Bookshop"))
    outcome = asyncio.run(validate_candidate(candidate, sandbox_pool, None, settings, test_state=STATE))
    assert not outcome.report.accepted
    assert "is_valid_isbn returned bool, not a dict" in outcome.report.critical
