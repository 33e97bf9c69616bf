"""Spec: an imported class whose state change takes a dict argument restricted to allowed keys is probed with
those keys, as a `**fields` tool is (docs/validation.md, "further keywords"), and accepted when the scenario's
state allows the call: a `Dict[str, Any]` / `dict` / `Optional[Dict[str, Any]]` parameter is tried with the keys
its code spells out as strings first (`{"phone", "email"}`), each with a value a record holds; a TypedDict
parameter with its declared keys, a key checked against a container (`item.get("sku") in self.catalog`) taking
that container's keys (outside check rt22-R13, F1: both classes were rejected, "update_patient_info never
succeeded in 5 attempt(s) (last answer: no patient); give a state where it can succeed", where EnvScaler plays
their reference solutions at 1.0).

Expected values are EnvScaler's own: its runtime (`EnvScalerNonConvRLEnv`) was run on these files, each
reference solution followed by "Task Completed": 0.0 before, 1.0 after."""

from __future__ import annotations

from typing import Any

import pytest

from tests.interop.conftest import import_one_env

PATIENTS = '''from typing import Dict, Any, Optional

class PatientRegistry:
    def __init__(self, init_config: dict):
        self.patients: Dict[str, dict] = {}

    def get_patient(self, patient_id: str) -> dict:
        """Get a patient's record by id."""
        if patient_id not in self.patients:
            return {"success": False, "error": "no patient"}
        return {"success": True, "data": self.patients[patient_id]}

    def update_patient_info(self, patient_id: str, updates: ANNOTATION) -> dict:
        """Update the contact information of a patient; allowed keys are "phone" and "email"."""
        if patient_id not in self.patients:
            return {"success": False, "error": "no patient"}
        allowed = {"phone", "email"}
        if not updates or not set(updates) <= allowed:
            return {"success": False, "error": "only phone and email can be updated"}
        self.patients[patient_id].update(updates)
        return {"success": True, "message": "updated"}
'''
ORDERS = '''from typing import Dict, TypedDict

class LineItem(TypedDict):
    sku: str
    qty: int

class OrderBook:
    def __init__(self, init_config: dict):
        self.catalog: Dict[str, dict] = {}
        self.orders: Dict[str, dict] = {}

    def get_order(self, order_id: str) -> dict:
        """Get an order by id."""
        if order_id not in self.orders:
            return {"success": False, "error": "no order"}
        return {"success": True, "data": self.orders[order_id]}

    def add_line(self, order_id: str, item: LineItem) -> dict:
        """Add a line item to an order."""
        if order_id not in self.orders:
            return {"success": False, "error": "no order"}
        if not isinstance(item, dict) or item.get("sku") not in self.catalog:
            return {"success": False, "error": "unknown sku"}
        if not isinstance(item.get("qty"), int) or item["qty"] < 1:
            return {"success": False, "error": "bad qty"}
        self.orders[order_id]["lines"].append({"sku": item["sku"], "qty": item["qty"]})
        return {"success": True, "message": "added"}
'''


def _env(env_id: str, name: str, code: str, query: str, change: str, id_param: str, obj: str) -> dict[str, Any]:
    def tool(tname: str, props: dict[str, Any]) -> dict[str, Any]:
        return {"type": "function", "function": {"name": tname, "description": tname, "parameters": {
            "type": "object", "properties": props, "required": list(props)}}}
    return {"env_id": env_id, "environment_introduction": "An env.", "constraints_rules": [], "env_class_name": name,
            "env_class_code": code,
            "tools": [tool(query, {id_param: {"type": "string"}}),
                      tool(change, {id_param: {"type": "string"}, obj: {"type": "object"}})],  # as EnvScaler's step6 writes it
            "operation_list": [{"operation_name": query, "operation_type": "query"},
                               {"operation_name": change, "operation_type": "state_change"}]}


def _patients(annotation: str) -> tuple[dict[str, Any], dict[str, Any], list[dict[str, Any]]]:
    env = _env("env_pat", "PatientRegistry", PATIENTS.replace("ANNOTATION", annotation), "get_patient",
               "update_patient_info", "patient_id", "updates")
    record = {"env_id": "env_pat", "env_class_name": "PatientRegistry", "task_id": "u1",
              "init_config": {"patients": {"p1": {"name": "Ann", "phone": "111", "email": "a@x.org"},
                                           "p2": {"name": "Bob", "phone": "333", "email": "b@x.org"}}},
              "task": "Change patient p1's phone to 222.", "checklist": ["phone"],
              "checklist_with_func": [{"check_item": "phone", "check_func": (
                  "def check_func(final_state):\n    return final_state['patients']['p1']['phone'] == '222'")}]}
    return env, record, [{"name": "update_patient_info", "arguments": {"patient_id": "p1", "updates": {"phone": "222"}}}]


def _orders() -> tuple[dict[str, Any], dict[str, Any], list[dict[str, Any]]]:
    env = _env("env_ord", "OrderBook", ORDERS, "get_order", "add_line", "order_id", "item")
    record = {"env_id": "env_ord", "env_class_name": "OrderBook", "task_id": "a1",
              "init_config": {"catalog": {"X-1": {"price": 3}, "Y-2": {"price": 5}}, "orders": {"o1": {"lines": []}}},
              "task": "Add 2 of sku X-1 to order o1.", "checklist": ["line"],
              "checklist_with_func": [{"check_item": "line", "check_func": (
                  "def check_func(final_state):\n    return final_state['orders']['o1']['lines'] == "
                  "[{'sku': 'X-1', 'qty': 2}]")}]}
    return env, record, [{"name": "add_line", "arguments": {"order_id": "o1", "item": {"sku": "X-1", "qty": 2}}}]


CASES = {
    "Dict[str, Any]": lambda: _patients("Dict[str, Any]"),
    "dict": lambda: _patients("dict"),
    "Optional[Dict[str, Any]] = None": lambda: _patients("Optional[Dict[str, Any]] = None"),
    "TypedDict": _orders,
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_env_is_accepted_and_its_scenario_verified(
        case: str, tmp_path_factory: pytest.TempPathFactory, sandbox_pool: Any) -> None:
    env, record, solution = CASES[case]()
    got = import_one_env(tmp_path_factory.mktemp("dictarg"), env, [record], {str(record["task_id"]): solution},
                         sandbox_pool, "da")
    assert [(e.status, e.reasons) for e in got["envs"]] == [("accepted", [])]
    assert [s.audit for s in got["scenarios"]] == ["verified"]
