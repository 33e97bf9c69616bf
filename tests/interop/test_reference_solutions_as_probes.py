"""Spec: an import's reference solutions are evidence that the tools they call can succeed: validation tries
their calls as probes, so a class whose accepted arguments no probing rule derives (a dict key its code allows
that no record holds, a PIN in a range no state value falls in) is accepted when a solution reaches the tool on
the scenario's state; without such a solution the reason's advice says what would help (a scenario and a
reference solution that calls the tool), not only "give a state where it can succeed", which was false when
the state already allowed the call (outside check rt22-R13, F1).

Expected values are EnvScaler's own: its runtime (`EnvScalerNonConvRLEnv`) plays each reference solution at 1.0."""

from __future__ import annotations

from typing import Any

import pytest

from tests.interop.conftest import import_one_env

CODE = '''class Accounts:
    def __init__(self, init_config: dict):
        self.users = {}

    def get_user(self, user_id: str) -> dict:
        """Get a user."""
        if user_id not in self.users:
            return {"success": False, "error": "no user"}
        return {"success": True, "data": self.users[user_id]}

    def set_pref(self, user_id: str, pref: dict) -> dict:
        """Set the user's language preference."""
        if user_id not in self.users:
            return {"success": False, "error": "no user"}
        if set(pref) != {"lang"} or pref["lang"] not in ("en", "fr", "de"):
            return {"success": False, "error": "bad preference"}
        self.users[user_id]["lang"] = pref["lang"]
        return {"success": True}

    def set_pin(self, user_id: str, pin: int) -> dict:
        """Set the user's PIN."""
        if user_id not in self.users:
            return {"success": False, "error": "no user"}
        if not 1000 <= pin <= 9999:
            return {"success": False, "error": "a PIN has four digits"}
        self.users[user_id]["pin"] = pin
        return {"success": True}
'''


def _tool(name: str, props: dict[str, Any]) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "description": name, "parameters": {
        "type": "object", "properties": props, "required": list(props)}}}


ENV = {"env_id": "env_acc", "environment_introduction": "Accounts.", "constraints_rules": [], "env_class_name": "Accounts",
       "env_class_code": CODE,
       "tools": [_tool("get_user", {"user_id": {"type": "string"}}),
                 _tool("set_pref", {"user_id": {"type": "string"}, "pref": {"type": "object"}}),
                 _tool("set_pin", {"user_id": {"type": "string"}, "pin": {"type": "integer"}})],
       "operation_list": [{"operation_name": "get_user", "operation_type": "query"},
                          {"operation_name": "set_pref", "operation_type": "state_change"},
                          {"operation_name": "set_pin", "operation_type": "state_change"}]}


def _record(task_id: str, check: str) -> dict[str, Any]:
    return {"env_id": "env_acc", "env_class_name": "Accounts", "task_id": task_id,
            "init_config": {"users": {"u1": {"name": "Ann"}, "u2": {"name": "Bob"}}},
            "task": f"Task {task_id}.", "checklist": [task_id],
            "checklist_with_func": [{"check_item": task_id, "check_func": f"def check_func(final_state):\n    return {check}"}]}


PREF = _record("p1", "final_state['users']['u1'].get('lang') == 'fr'")
PIN = _record("n1", "final_state['users']['u1'].get('pin') == 4321")
PREF_CALL = [{"name": "set_pref", "arguments": {"user_id": "u1", "pref": {"lang": "fr"}}}]
PIN_CALL = [{"name": "set_pin", "arguments": {"user_id": "u1", "pin": 4321}}]


def test_the_solutions_calls_reach_what_the_probes_cannot(tmp_path_factory: pytest.TempPathFactory,
                                                        sandbox_pool: Any) -> None:
    got = import_one_env(tmp_path_factory.mktemp("hints"), ENV, [PREF, PIN], {"p1": PREF_CALL, "n1": PIN_CALL},
                         sandbox_pool, "hi")
    assert [(e.status, e.reasons) for e in got["envs"]] == [("accepted", [])]
    assert sorted(s.audit for s in got["scenarios"]) == ["verified", "verified"]


def test_without_a_solution_reaching_the_tool_the_advice_names_one(tmp_path_factory: pytest.TempPathFactory,
                                                                   sandbox_pool: Any) -> None:
    got = import_one_env(tmp_path_factory.mktemp("nohint"), ENV, [PREF, PIN], {"p1": PREF_CALL},
                         sandbox_pool, "nh")
    ((status, reasons),) = [(e.status, e.reasons) for e in got["envs"]]
    assert status == "rejected"
    (reason,) = reasons
    assert reason.startswith("coverage: state-changing code never executed: set_pin never succeeded")
    assert reason.endswith("give a scenario whose state lets it succeed and a reference solution that calls it "
                           "there (validation tries the solutions' calls as probes)")
