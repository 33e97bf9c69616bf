"""An env in EnvScaler's own files (env metadata, one RL scenario, its reference solution), imported through
the real importer, and the calls of the episode-rules specs. The rewards the specs expect are what
EnvScaler's runtime (interact_with_env/envscaler_env, `EnvScalerNonConvRLEnv.step`) gives these calls: it
was run on these files when the specs were written (see each spec)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from envscaler_core.config import Settings
from envscaler_core.interop.importer import ImportReport
from envscaler_core.models import AcceptedEnv, Scenario
from envscaler_core.store import Store
from tests.interop.conftest import run_import, settings_for, write_one_scenario_dir

PANTRY_CODE = '''
from datetime import date


class PantryEnv:
    UNITS = ("g", "ml", "pcs")

    def __init__(self, init_config: dict):
        self.items = {}
        self.orders = []

    def get_item(self, item_id: str) -> dict:
        """
        Get one pantry item by its id.

        Returns:
            dict: {"success": True, "data": dict} or {"success": False, "error": str}
        """
        if item_id not in self.items:
            return {"success": False, "error": "Item not found"}
        return {"success": True, "data": self.items[item_id]}

    def restock(self, item_id: str, amount: int) -> dict:
        """
        Add stock to an item.

        Returns:
            dict: {"success": True, "message": str} or {"success": False, "error": str}
        """
        if item_id not in self.items:
            return {"success": False, "error": "Item not found"}
        self.items[item_id]["qty"] += amount
        return {"success": True, "message": "restocked"}

    def order(self, item_id: str, due: str) -> dict:
        """
        Order an item for delivery on a date (YYYY-MM-DD).

        Returns:
            dict: {"success": True, "message": str} or {"success": False, "error": str}
        """
        if item_id not in self.items:
            return {"success": False, "error": "Item not found"}
        if len(due) != 10 or due[4] != "-" or due[7] != "-":
            return {"success": False, "error": "Use YYYY-MM-DD"}
        date.fromisoformat(due)
        self.orders.append({"item_id": item_id, "due": due})
        return {"success": True, "message": "ordered"}

    def label(self, item_id: str, label: str) -> dict:
        """
        Label an item.

        Returns:
            dict: {"success": True, "message": str} or {"success": False, "error": str}
        """
        if item_id not in self.items:
            return {"success": False, "error": "Item not found"}
        self.items[item_id]["label"] = label
        return {"success": True, "message": "labelled"}
'''


def _tool(name: str, props: dict[str, Any]) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "description": name,
                                             "parameters": {"type": "object", "properties": props,
                                                            "required": list(props)}}}


ENV = {
    "env_id": "env_pantry", "environment_summary": "Pantry", "environment_introduction": "A pantry.",
    "state_space_definition": [], "constraints_rules": [], "operation_list": [], "env_class_name": "PantryEnv",
    "env_class_code": PANTRY_CODE, "env_class_def": "", "env_structure": {},
    "tools": [_tool("get_item", {"item_id": {"type": "string"}}),
              _tool("restock", {"item_id": {"type": "string"}, "amount": {"type": "integer"}}),
              _tool("order", {"item_id": {"type": "string"}, "due": {"type": "string"}}),
              _tool("label", {"item_id": {"type": "string"}, "label": {"type": "string"}})],
}

CHECKS = [
    "def check_func(final_state):\n    return final_state['items']['I1']['qty'] == 5",
    "def check_func(final_state):\n    return {'item_id': 'I2', 'due': '2026-03-02'} in final_state['orders']",
    "def check_func(final_state):\n    return final_state['items']['I1']['label'] == 'dry'",
    "def check_func(final_state):\n    return len(final_state['orders']) == 1",
]

SCENARIO = {
    "env_id": "env_pantry", "env_class_name": "PantryEnv", "task_id": "p1",
    "init_config": {"items": {"I1": {"item_id": "I1", "name": "Rice", "qty": 2, "label": ""},
                              "I2": {"item_id": "I2", "name": "Milk", "qty": 0, "label": ""}},
                    "orders": []},
    "task": "Restock I1 by 3, order I2 for 2026-03-02 and label I1 'dry'.",
    "checklist": ["I1 restocked", "I2 ordered", "I1 labelled", "one order"],
    "checklist_with_func": [{"check_func": c} for c in CHECKS],
}


def call(name: str, **args: Any) -> dict[str, Any]:
    return {"name": name, "arguments": args}


SOLUTION = [call("restock", item_id="I1", amount=3), call("order", item_id="I2", due="2026-03-02"),
            call("label", item_id="I1", label="dry")]
RAISES = call("order", item_id="I2", due="2026-02-30")  # well-typed; date.fromisoformat raises ValueError
MISSING_ARG = call("restock", item_id="I1")
EXTRA_ARG = call("get_item", item_id="I1", verbose=True)
DATA_ATTRIBUTE = call("items")
CLASS_CONSTANT = call("UNITS")
UNKNOWN = call("delete_item", item_id="I1")


def import_pantry(tmp: Path, runtime: Any, run_id: str = "pantry") -> tuple[Settings, AcceptedEnv, Scenario]:
    """EnvScaler's files for the pantry written to `tmp`, imported into a fresh store; the accepted env and
    its verified scenario as the store holds them."""
    directory = write_one_scenario_dir(tmp / "envscaler", ENV, SCENARIO, SOLUTION)
    settings = settings_for(tmp)
    report: ImportReport = run_import(directory, settings, runtime, run_id=run_id)
    with Store.from_url(settings.store.url) as store:
        envs = store.query(AcceptedEnv, run_id=run_id)
        scenarios = [s for s in store.query(Scenario, run_id=run_id) if s.status == "verified"]
    assert len(envs) == 1 and len(scenarios) == 1, report
    return settings, envs[0], scenarios[0]
