"""Spec: a tool that names no method but a property or a class constant of the class (EnvScaler's step6 lists
every method definition, `@property def loan_count` included) is kept in the tool list as EnvScaler offers it,
with a note; validation does not demand it be called successfully (nothing can be: it is no method), and under
an imported env's rules a call to it ends the episode at 0, as EnvScaler's `getattr(env, name)(**args)` raises
TypeError on the value (outside check 10, C-F1: the env was rejected, "coverage: loan_count was never called",
where EnvScaler scores its scenario 1.0; in a larger env the gym answered "'loan_count' is not a method" and
paid 1.0 after it).

Expected values are EnvScaler's own: its runtime (`EnvScalerNonConvRLEnv`) was run on these files, each plan
followed by "Task Completed": lend_book(book_id="b1") 1.0; then loan_count() "TypeError: 'int' object is not
callable", terminated, 0.0; then MAX_LOANS() "TypeError: 'int' object is not callable", terminated, 0.0."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from envscaler_core.config import Settings
from envscaler_core.gym import load_rl_set
from envscaler_core.models import ToolCall
from envscaler_core.rollout import ScriptedAgent, run_rollout
from tests.interop.conftest import import_one_env

CODE = '''class Lib:
    MAX_LOANS = 3

    def __init__(self, init_config: dict):
        self.loans = []
        self.books = {}

    @property
    def loan_count(self):
        """Number of loans."""
        return len(self.loans)

    def lend_book(self, book_id: str) -> dict:
        """Lend a book."""
        if book_id not in self.books or self.books[book_id] <= 0:
            return {"success": False, "error": "no copies"}
        self.books[book_id] -= 1
        self.loans.append(book_id)
        return {"success": True}
'''
NONE = {"type": "object", "properties": {}, "required": []}


def _tool(name: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "description": name, "parameters": params}}


ENV = {"env_id": "env_p", "environment_introduction": "A library.", "constraints_rules": [], "env_class_name": "Lib",
       "env_class_code": CODE,
       "tools": [_tool("loan_count", NONE), _tool("MAX_LOANS", NONE),
                 _tool("lend_book", {"type": "object", "properties": {"book_id": {"type": "string"}},
                                     "required": ["book_id"]})],
       "operation_list": [{"operation_name": "loan_count", "operation_type": "query"},
                          {"operation_name": "MAX_LOANS", "operation_type": "query"},
                          {"operation_name": "lend_book", "operation_type": "state_change"}]}
LEND = {"env_id": "env_p", "env_class_name": "Lib", "task_id": "t1", "init_config": {"books": {"b1": 2}, "loans": []},
        "task": "Lend b1.", "checklist": ["lent"],
        "checklist_with_func": [{"check_item": "lent", "check_func": (
            "def check_func(final_state):\n    return final_state['loans'] == ['b1']")}]}
SOLUTION = [{"name": "lend_book", "arguments": {"book_id": "b1"}}]
DONE = {"tool": "chat_with_user", "args": {"content": "Task Completed"}}


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory, sandbox_pool: Any) -> dict[str, Any]:
    return import_one_env(tmp_path_factory.mktemp("no-method"), ENV, [LEND], {"t1": SOLUTION}, sandbox_pool, "nm",
                          rl_export=True)


def test_the_env_is_accepted_and_its_scenario_verified(imported: dict[str, Any]) -> None:
    assert [(e.status, e.reasons) for e in imported["envs"]] == [("accepted", [])]
    assert [s.audit for s in imported["scenarios"]] == ["verified"]


def test_the_tools_stay_offered_as_envscaler_offers_them(imported: dict[str, Any]) -> None:
    (env,) = imported["accepted"]
    assert [t.function.name for t in env.tools] == ["loan_count", "MAX_LOANS", "lend_book"]


def test_a_note_names_them_and_what_a_call_does(imported: dict[str, Any]) -> None:
    notes = imported["report"].notes
    assert any(n.startswith("env_metadata.json[env_p]: 2 tool(s) that are no method of the class kept "
                            "(loan_count: a property, MAX_LOANS: a class attribute)") and "not callable" in n
               for n in notes), notes


def _roll(imported: dict[str, Any], plan: list[dict[str, Any]]) -> Any:
    agent = ScriptedAgent([ToolCall(tool=c["name"], args=c["arguments"]) for c in plan])
    return asyncio.run(run_rollout(imported["accepted"][0], imported["promoted"][0], imported["pool"], None,
                                   Settings(), agent=agent))


def test_the_solution_earns_what_envscaler_gives(imported: dict[str, Any]) -> None:
    assert _roll(imported, SOLUTION).reward == 1.0


@pytest.mark.parametrize("name", ["loan_count", "MAX_LOANS"])
def test_a_call_to_one_ends_the_rollout_at_zero(imported: dict[str, Any], name: str) -> None:
    traj = _roll(imported, [*SOLUTION, {"name": name, "arguments": {}}])
    assert traj.termination == "tool_raised" and traj.reward == 0.0 and "not callable" in traj.error


def test_a_call_to_one_ends_the_gym_episode_at_zero(imported: dict[str, Any]) -> None:
    (gym,) = load_rl_set(imported["rl"], imported["pool"])
    gym.reset(options={"scenario_index": 0})
    observations = []
    for action in [{"tool": "lend_book", "args": {"book_id": "b1"}}, {"tool": "loan_count", "args": {}}, DONE]:
        obs, reward, terminated, truncated, info = gym.step(action)
        observations.append(obs)
        if terminated or truncated:
            break
    assert len(observations) == 2 and "not callable" in json.loads(observations[1])["error"]
    assert reward == 0.0 and info["all_passed"] is False and "TypeError" in info["ended"]


@pytest.mark.parametrize(("head", "member", "data"), [
    ("", "    @property\n    def get_summary(self):\n        return Armer(self) == 1\n",
     {"MAX_LOANS": "a class attribute", "loan_count": "a property"}),
    # `len` rebound: `loan_count`'s `len(self.loans)` may be callable too
    ("from functools import partialmethod as len\n", "    get_summary = len(lend_book, 'b1')\n",
     {"MAX_LOANS": "a class attribute"}),
])
def test_a_comparison_or_a_rebound_builtin_may_be_callable(head: str, member: str, data: dict) -> None:
    """rt13 F1: `Armer(self) == 1` (an `__eq__` returning a partial) and `len(...)` with `len` bound to
    `partialmethod` were taken for data, never probed, and a writing `get_summary` paid 1.0."""
    from envscaler_core.rollout.rules import no_method_tools

    code = head + CODE + member
    assert no_method_tools(code, "Lib", ["get_summary", "MAX_LOANS", "loan_count"]) == data
