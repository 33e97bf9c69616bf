"""Spec: probes take their values from where the class really keeps them (keys of a dict with no id
field, an `id` field under another name, a container named like the parameter), aim at the records that
make a guarded branch fire, and never probe an ordinary string as a missing id."""

from __future__ import annotations

from envscaler_core.synth import extract_tools
from envscaler_core.validation import plan_tools
from envscaler_core.validation.class_effects import ClassEffects
from envscaler_core.validation.state_values import fresh_id


def plans(code: str, class_name: str, state: dict) -> dict:
    tools = extract_tools(code, class_name)
    return {p.tool: p for p in plan_tools(tools, state, ClassEffects(code, class_name))}


TODO = '''
class Todo:
    def __init__(self):
        self.items = {}

    def complete(self, todo_id: str) -> dict:
        """Mark an item done."""
        item = self.items.get(todo_id)
        if item is None:
            return {"success": False, "error": "no such item"}
        item["done"] = True
        return {"success": True, "message": "done"}

    def rename(self, todo_id: str, title: str) -> dict:
        """Rename an item."""
        if todo_id not in self.items:
            return {"success": False, "error": "no such item"}
        self.items[todo_id]["title"] = title
        return {"success": True, "message": "renamed"}

    def add(self, item_id: str, title: str) -> dict:
        """Add an item."""
        if item_id in self.items:
            return {"success": False, "error": "exists"}
        self.items[item_id] = {"title": title, "done": False}
        return {"success": True, "message": "added"}
'''
TODO_STATE = {"items": {"t1": {"title": "Buy milk", "done": False}, "t2": {"title": "Call Ana", "done": True}}}


def test_ids_are_the_keys_of_the_dict_the_method_looks_up_even_without_an_id_field() -> None:
    first = plans(TODO, "Todo", TODO_STATE)["complete"].positives()[0]
    assert first.args == {"todo_id": "t1"}


def test_an_ordinary_string_argument_is_never_probed_as_a_missing_id() -> None:
    plan = plans(TODO, "Todo", TODO_STATE)["rename"]
    missing = plan.missing(plan.positives()[0].args)
    assert [p.args for p in missing] == [{"todo_id": "t9", "title": "Buy milk"}]  # an id shaped like t1 and t2


def test_a_creating_tool_tries_a_fresh_id_in_the_states_style_right_after_an_existing_one() -> None:
    values = [p.args["item_id"] for p in plans(TODO, "Todo", TODO_STATE)["add"].positives()]
    assert values[:2] == ["t1", "t3"]


LENDING = '''
class Lending:
    def __init__(self, init_config: dict):
        self.books = []
        self.members = {}
        self.init_config = init_config

    def lend(self, book_id: str, patron: str) -> dict:
        """Lend a book to a member."""
        book = next((b for b in self.books if b["id"] == book_id), None)
        if book is None:
            return {"success": False, "error": "no such book"}
        if patron not in self.members:
            return {"success": False, "error": "no such member"}
        if book["copies"] <= 0 or not book["lendable"]:
            return {"success": False, "error": "cannot lend"}
        book["copies"] -= 1
        return {"success": True, "message": "lent"}
'''
LENDING_STATE = {
    "books": [{"id": "b-1", "title": "Dune", "copies": 2, "lendable": True},
              {"id": "b-2", "title": "Emma", "copies": 0, "lendable": True},
              {"id": "b-3", "title": "Ulysses", "copies": 4, "lendable": False}],
    "members": {"ana": {"name": "Ana"}},
}


def test_a_parameter_matched_against_a_differently_named_field_takes_that_fields_values() -> None:
    plan = plans(LENDING, "Lending", LENDING_STATE)["lend"]
    assert plan.positives()[0].args == {"book_id": "b-1", "patron": "ana"}
    assert plan.options["patron"].reference  # a key of `members`, though not named like an id


def test_edge_probes_pick_the_records_whose_guarded_fields_make_the_rule_fire() -> None:
    plan = plans(LENDING, "Lending", LENDING_STATE)["lend"]
    edge_books = {p.args["book_id"] for p in plan.edges({"book_id": "b-1", "patron": "ana"})}
    assert {"b-2", "b-3"} <= edge_books  # no copies left; not lendable


def test_without_code_bindings_a_container_named_like_the_parameter_supplies_ids() -> None:
    code = '''
class Shop:
    def __init__(self):
        self.orders = {}

    def cancel_order(self, order_id: str) -> dict:
        """Cancel an order."""
        return self._cancel(order_id)

    def _cancel(self, oid):
        return {"success": True}
'''
    state = {"orders": {"o-17": {"status": "open"}}}
    assert plans(code, "Shop", state)["cancel_order"].positives()[0].args == {"order_id": "o-17"}


def test_integer_ids_kept_as_json_object_keys_are_offered_as_integers() -> None:
    code = '''
class Seats:
    def __init__(self):
        self.seats = {}

    def release(self, seat_no: int) -> dict:
        """Release a seat."""
        if str(seat_no) not in self.seats:
            return {"success": False, "error": "no seat"}
        return {"success": True}
'''
    state = {"seats": {"12": {"taken": True}, "14": {"taken": False}}}
    assert plans(code, "Seats", state)["release"].positives()[0].args == {"seat_no": 12}


def test_enum_parameters_use_an_allowed_value_and_optional_ones_are_left_out() -> None:
    code = '''
from typing import Literal


class Tickets:
    def __init__(self):
        self.tickets = {}

    def list_tickets(self, status: Literal["open", "closed"], limit: int = 10) -> dict:
        """List tickets."""
        return {"success": True, "data": []}
'''
    assert plans(code, "Tickets", {"tickets": {}})["list_tickets"].positives()[0].args == {"status": "open"}


def test_fresh_ids_follow_the_existing_style() -> None:
    assert fresh_id(["T-007", "T-012"]) == "T-013"
    assert fresh_id([3, 9]) == 10
    assert fresh_id(["alpha"]) == "alpha-new"


RANKED = '''
from typing import Union


class Ranked:
    def __init__(self):
        self.tasks = {}

    def set_rank(self, task_id: str, rank: Union[int, str]) -> dict:
        """Set a task's rank: 1-5, or "top"."""
        if task_id not in self.tasks:
            return {"success": False, "error": "no such task"}
        self.tasks[task_id]["rank"] = rank
        return {"success": True, "message": "ranked"}
'''
RANKED_STATE = {"tasks": {"a": {"rank": 3}, "b": {"rank": "top"}}}


def test_a_union_parameter_is_probed_with_the_states_values_in_their_own_types_first() -> None:
    plan = plans(RANKED, "Ranked", RANKED_STATE)["set_rank"]
    assert plan.options["rank"].values[:2] == [3, "top"]


def test_a_union_parameter_is_probed_with_values_of_every_member_type() -> None:
    values = plans(RANKED, "Ranked", {"tasks": {"a": {}}})["set_rank"].options["rank"].values
    assert any(type(v) is int for v in values) and any(type(v) is str for v in values)
