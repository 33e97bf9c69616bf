"""Spec: what an imported env's verdict says when its class is validated on an empty state or cannot
reach a tool (outside interop check, findings 7 and 8)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from envscaler_core.interop.envjob import judge_env, static_problems
from envscaler_core.interop.read import read_envs
from tests.interop.conftest import settings_for

DIRECTORY = '''
class UserDirectory:
    def __init__(self, init_config: dict):
        self.users = {}
        self.current_user = None

    def get_user(self, user_id: str) -> dict:
        if user_id not in self.users:
            return {"success": False, "error": "no such user"}
        return {"success": True, "data": self.users[user_id]}

    def login(self, user_id: str) -> dict:
        if user_id not in self.users:
            return {"success": False, "error": "no such user"}
        self.current_user = user_id
        return {"success": True, "message": "logged in"}

    def set_my_email(self, email: str) -> dict:
        if self.current_user is None:
            return {"success": False, "error": "log in first"}
        self.users[self.current_user]["email"] = email
        return {"success": True, "message": "updated"}
'''
def _read_env(tmp_path: Path, class_name: str, code: str, tools: dict[str, tuple[str, dict[str, str]]]) -> Any:
    """An env record in EnvScaler's format, as the importer reads it. `tools`: name -> (operation type,
    {parameter: JSON type}), every parameter required."""
    schemas = [{"type": "function", "function": {"name": name, "description": name, "parameters": {
        "type": "object", "properties": {p: {"type": t} for p, t in params.items()}, "required": list(params)}}}
        for name, (_, params) in tools.items()]
    record = {"env_id": "env_1", "environment_summary": class_name, "environment_introduction": class_name,
              "state_space_definition": [], "constraints_rules": [], "env_class_name": class_name,
              "env_class_code": code, "tools": schemas,
              "operation_list": [{"operation_name": n, "operation_type": op} for n, (op, _) in tools.items()]}
    path = tmp_path / "env_metadata.json"
    path.write_text(json.dumps({"env_1": record}))
    [env], _, _ = read_envs(path)
    return env


def _env(tmp_path: Path) -> Any:
    return _read_env(tmp_path, "UserDirectory", DIRECTORY, {"get_user": ("query", {"user_id": "string"}),
                                                            "login": ("state_change", {"user_id": "string"}),
                                                            "set_my_email": ("state_change", {"email": "string"})})


def test_a_class_whose_tools_only_refuse_on_an_empty_state_is_accepted_with_a_note(tmp_path: Path,
                                                                                   sandbox_pool: Any) -> None:
    """No scenario state loaded, so the env was validated on `{}`: every tool answered "no such user",
    which says the files gave no data, not that the class is wrong."""
    outcome = judge_env(_env(tmp_path), None, None, sandbox_pool, settings_for(tmp_path), [], on_empty=True)
    assert outcome.accepted, outcome.reasons
    assert "validated on an empty state only" in outcome.notes[0] and "set_my_email (state change)" in outcome.notes[0]
    assert "get_user (query)" in outcome.notes[0], "a query tool is named as one, not as a state change"


def test_an_env_the_files_give_no_scenario_is_said_to_have_none(tmp_path: Path, sandbox_pool: Any) -> None:
    """Not "no scenario's initial state loaded": nothing failed to load (an outside check's envs had none)."""
    from envscaler_core.interop.envjob import audit_env

    outcome = audit_env(_env(tmp_path), [], {}, sandbox_pool, settings_for(tmp_path), [])
    assert outcome.accepted, outcome.reasons
    assert "the files give it no scenario" in outcome.notes[0] and "initial state loaded" not in outcome.notes[0]


def test_a_state_change_that_needs_another_call_first_is_reached_after_it(tmp_path: Path, sandbox_pool: Any) -> None:
    """`set_my_email` refuses until `login` ran in the same episode: one call per fresh episode never
    reaches it (the env was rejected for coverage, outside interop check finding 8); probed again after
    `login`'s accepted call, it is reached and the env accepted."""
    state = {"users": {"u1": {"email": "a@x.io"}}, "current_user": None}
    outcome = judge_env(_env(tmp_path), state, None, sandbox_pool, settings_for(tmp_path), [])
    assert outcome.accepted, outcome.reasons
    [reached] = [r for r in outcome.rounds if r.tool == "set_my_email" and r.check == "contract"]
    assert reached.observation == {"success": True, "message": "updated"} and "after login" in reached.reason


def test_a_rejection_for_an_unreached_state_change_says_so_not_a_score(tmp_path: Path, sandbox_pool: Any) -> None:
    """A state change no call can reach rejects the env for coverage, and the reason says that instead of
    'validation score 0.89 below the threshold 0.85' (the score was above the threshold)."""
    env = _env(tmp_path).model_copy(update={"code": DIRECTORY.replace('if self.current_user is None:',
                                                                      'if True:  # maintenance')})
    state = {"users": {"u1": {"email": "a@x.io"}}, "current_user": None}
    outcome = judge_env(env, state, None, sandbox_pool, settings_for(tmp_path), [])
    assert not outcome.accepted
    assert any("state-changing code never executed" in r and "set_my_email" in r for r in outcome.reasons)
    assert not any("below the threshold" in r for r in outcome.reasons), outcome.reasons


ORDERS = '''
import datetime


class Orders:
    def __init__(self, init_config: dict):
        self.orders = {}
        self.tags = set()

    def get_order(self, order_id: str) -> dict:
        if order_id not in self.orders:
            return {"success": False, "error": "no such order"}
        order = self.orders[order_id]
        return {"success": True, "data": {"due": order["due"].isoformat(), "tags": sorted(self.tags)}}

    def postpone(self, order_id: str, days: int) -> dict:
        if order_id not in self.orders:
            return {"success": False, "error": "no such order"}
        if not 0 < days < 365:
            return {"success": False, "error": "days must be 1-364"}
        self.orders[order_id]["due"] = self.orders[order_id]["due"] + datetime.timedelta(days=days)
        self.tags.add("postponed")
        return {"success": True, "message": "postponed"}
'''


def test_a_class_using_marker_values_as_python_types_is_validated_with_them_restored(tmp_path: Path,
                                                                                     sandbox_pool: Any) -> None:
    """The config carries a datetime and a set as EnvScaler's markers; the class calls `.isoformat()` and
    `+ timedelta` on them. Probing it on the flattened config (strings, lists) rejected it though
    EnvScaler runs it (outside interop check, finding 4)."""
    env = _read_env(tmp_path, "Orders", ORDERS, {
        "get_order": ("query", {"order_id": "string"}),
        "postpone": ("state_change", {"order_id": "string", "days": "integer"})})
    config = {"orders": {"O1": {"due": {"__type__": "datetime", "value": "2024-03-01T10:00:00"}}},
              "tags": {"__type__": "set", "items": ["new"]}}
    outcome = judge_env(env, config, None, sandbox_pool, settings_for(tmp_path), [])
    assert outcome.accepted, outcome.reasons


BANK = '''
class Bank:
    def __init__(self, init_config: dict):
        self.users = {}
        self.user = None
        self.account = None

    def login(self, user_id: str) -> dict:
        if user_id not in self.users:
            return {"success": False, "error": "no such user"}
        self.user = user_id
        return {"success": True, "message": "logged in"}

    def select_account(self, account_id: str) -> dict:
        if self.user is None:
            return {"success": False, "error": "log in first"}
        if account_id not in self.users[self.user]["accounts"]:
            return {"success": False, "error": "no such account"}
        self.account = account_id
        return {"success": True, "message": "selected"}

    def deposit(self, amount: int) -> dict:
        if self.account is None:
            return {"success": False, "error": "no account selected"}
        if amount <= 0:
            return {"success": False, "error": "amount must be positive"}
        self.users[self.user]["accounts"][self.account] += amount
        return {"success": True, "message": "deposited"}
'''


def test_a_state_change_that_needs_two_earlier_calls_is_reached_after_both(tmp_path: Path, sandbox_pool: Any) -> None:
    """login, then select_account, then deposit (the outside re-check's variant of finding 8)."""
    env = _read_env(tmp_path, "Bank", BANK, {"login": ("state_change", {"user_id": "string"}),
                                             "select_account": ("state_change", {"account_id": "string"}),
                                             "deposit": ("state_change", {"amount": "integer"})})
    state = {"users": {"u1": {"accounts": {"a1": 10}}}, "user": None, "account": None}
    outcome = judge_env(env, state, None, sandbox_pool, settings_for(tmp_path), [])
    assert outcome.accepted, outcome.reasons
    [reached] = [r for r in outcome.rounds if r.tool == "deposit" and r.check == "contract"]
    assert "after login, select_account" in reached.reason


def test_a_setup_is_also_tried_with_the_tools_next_positive(tmp_path: Path, sandbox_pool: Any) -> None:
    """The first user login accepts owns no account: select_account fails after it, and only the next
    user's login leads on (the outside re-check's variant: the env was rejected though its solution ran)."""
    env = _read_env(tmp_path, "Bank", BANK, {"login": ("state_change", {"user_id": "string"}),
                                             "select_account": ("state_change", {"account_id": "string"}),
                                             "deposit": ("state_change", {"amount": "integer"})})
    state = {"users": {"u0": {"accounts": {}}, "u1": {"accounts": {"a1": 10}}}, "user": None, "account": None}
    outcome = judge_env(env, state, None, sandbox_pool, settings_for(tmp_path), [])
    assert outcome.accepted, outcome.reasons
    assert {r.tool for r in outcome.rounds if r.check == "contract" and r.observation.get("success")} >= {
        "login", "select_account", "deposit"}


def test_an_imported_class_defining_the_sandboxs_own_hook_is_a_static_problem(tmp_path: Path) -> None:
    """Red team sandbox-3 F4b: only the importer's own adapter may give a class the sandbox's hooks."""
    hooked = DIRECTORY.replace("    def get_user(", "    @staticmethod\n    def __sandbox_config__(config):\n"
                               "        return {}\n\n    def get_user(")
    env = _read_env(tmp_path, "UserDirectory", hooked, {"get_user": ("query", {"user_id": "string"})})
    problems = static_problems(env)
    assert problems and "'__sandbox_config__' names one of the sandbox's own hooks" in problems[0], problems
    assert static_problems(_env(tmp_path)) == []
