"""Spec: a parameter with a quoted annotation (`qty: "int"`) gets the schema of the type the string names, with
a note. EnvScaler's step6 writes any quoted annotation as `{"type": "string"}` (its `ann_to_str` maps a
constant to its type's name, `str`) and its runtime never checks arguments; kept, that schema refused every
integer, so `place` never succeeded and the env was rejected on coverage, where EnvScaler scores the
scenario's solution `place(item_id="i1", qty=2)` 1.0 (outside check 10, C-F5). The string is read through
the one AST parser, never evaluated; one that says `str` is left as it is.

Expected values are EnvScaler's own: its runtime (`EnvScalerNonConvRLEnv`) was run on these files, the
solution followed by "Task Completed": 1.0."""

from __future__ import annotations

from typing import Any

import pytest

from tests.interop.conftest import import_one_env

CODE = '''from typing import List, Optional


class Shop:
    def __init__(self, init_config: dict):
        self.items = {}
        self.orders = []

    def place(self, item_id: "str", qty: "int", tags: "List[str]", until: "Optional[int]" = None) -> dict:
        """Place an order."""
        if item_id not in self.items or not isinstance(qty, int) or qty <= 0:
            return {"success": False, "error": "bad item or qty"}
        self.orders.append({"item_id": item_id, "qty": qty, "tags": list(tags), "until": until})
        return {"success": True}
'''
S = {"type": "string"}
ENV = {"env_id": "env_shop", "environment_introduction": "A shop.", "constraints_rules": [],
       "env_class_name": "Shop", "env_class_code": CODE,
       "tools": [{"type": "function", "function": {"name": "place", "description": "Place an order.", "parameters": {
           "type": "object", "properties": {"item_id": S, "qty": S, "tags": S, "until": S},
           "required": ["item_id", "qty", "tags", "until"]}}}],  # as EnvScaler's step6 writes them
       "operation_list": [{"operation_name": "place", "operation_type": "state_change"}]}
PLACE = {"env_id": "env_shop", "env_class_name": "Shop", "task_id": "place",
         "init_config": {"items": {"i1": {"name": "pen"}}, "orders": []}, "task": "Order 2 of i1.",
         "checklist": ["placed"], "checklist_with_func": [{"check_item": "placed", "check_func": (
             "def check_func(final_state):\n    return [o['qty'] for o in final_state['orders']] == [2]")}]}
SOLUTION = [{"name": "place", "arguments": {"item_id": "i1", "qty": 2, "tags": ["gift"]}}]


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory, sandbox_pool: Any) -> dict[str, Any]:
    return import_one_env(tmp_path_factory.mktemp("quoted"), ENV, [PLACE], {"place": SOLUTION}, sandbox_pool, "q")


def test_the_env_is_accepted_and_the_solution_verifies_its_scenario(imported: dict[str, Any]) -> None:
    assert [(e.status, e.reasons) for e in imported["envs"]] == [("accepted", [])]
    assert [s.audit for s in imported["scenarios"]] == ["verified"]


def test_a_quoted_annotation_gets_the_schema_of_the_type_it_names(imported: dict[str, Any]) -> None:
    (env,) = imported["accepted"]
    assert env.tools[0].function.parameters == {
        "type": "object", "required": ["item_id", "qty", "tags"],
        "properties": {"item_id": S, "qty": {"type": "integer"}, "tags": {"type": "array", "items": S},
                       "until": {"type": ["integer", "null"]}}}


def test_a_note_names_each_parameter_read_from_its_quoted_annotation(imported: dict[str, Any]) -> None:
    notes = imported["report"].notes
    assert any(n.startswith("env_metadata.json[env_shop]: 3 quoted annotation(s) read as the type they name "
                            "(place.qty: 'int', place.tags: 'List[str]', place.until: 'Optional[int]')")
               for n in notes), notes
