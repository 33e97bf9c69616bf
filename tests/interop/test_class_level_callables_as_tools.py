"""Spec: a tool that is a class-level callable but no `def` (a method alias `lend = lend_book`, a lambda
attribute, a `@property` whose value is callable) is called, as EnvScaler's runtime calls it
(`getattr(env, name)(**arguments)`); only a value that is not callable raises its TypeError
(test_tools_that_are_no_method.py). Validation probes such tools like any other, so a getter that writes
state is caught as a query that changes state. Before (outside check 11, B-F3) they were answered "not a
method ... EnvScaler raises TypeError" and ended the episode at 0, so an RL row whose reference solution
calls `lend` scored 0 in the gym where EnvScaler scores it 1.0.

Expected values are EnvScaler's own: its runtime (`EnvScalerNonConvRLEnv`) was run on these files, each plan
followed by "Task Completed": lend(book_id="b1", member="Ana") 1.0; count() then lend_book(...) 1.0;
summary() then lend_book(...) 1.0."""

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

CODE = '''class Library:
    def __init__(self, init_config):
        self.books = {}

    def lend_book(self, book_id: str, member: str) -> dict:
        """Lend a book to a member."""
        b = self.books.get(book_id)
        if b is None or b["lent_to"]:
            return {"success": False, "error": "not available"}
        b["lent_to"] = member
        return {"success": True}

    lend = lend_book
    count = lambda self: {"success": True, "data": len(self.books)}

    @property
    def summary(self):
        """A summary of the library."""
        return lambda: {"success": True, "data": sorted(self.books)}
'''
S = {"type": "string"}
NONE = {"type": "object", "properties": {}, "required": []}
LEND = {"type": "object", "properties": {"book_id": S, "member": S}, "required": ["book_id", "member"]}


def _tool(name: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "description": name, "parameters": params}}


def _env(code: str) -> dict[str, Any]:
    return {"env_id": "env_lib", "environment_introduction": "A library.", "constraints_rules": [],
            "env_class_name": "Library", "env_class_code": code,
            "tools": [_tool("lend", LEND), _tool("count", NONE), _tool("summary", NONE), _tool("lend_book", LEND)],
            "operation_list": [{"operation_name": n, "operation_type": k} for n, k in (
                ("lend", "state_change"), ("count", "query"), ("summary", "query"), ("lend_book", "state_change"))]}


SCENARIO = {"env_id": "env_lib", "env_class_name": "Library", "task_id": "t1",
            "init_config": {"books": {"b1": {"lent_to": ""}, "b2": {"lent_to": "Bo"}}},
            "task": "Lend b1 to Ana.", "checklist": ["lent"], "checklist_with_func": [{"check_item": "lent", "check_func": (
                "def check_func(final_state):\n    return final_state['books']['b1']['lent_to'] == 'Ana'")}]}
SOLUTION = [{"name": "lend", "arguments": {"book_id": "b1", "member": "Ana"}}]
WRITING_GETTER = CODE.replace('        """A summary of the library."""\n',
                              '        """A summary of the library."""\n        self.books["b9"] = {"lent_to": ""}\n')


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory, sandbox_pool: Any) -> dict[str, Any]:
    return import_one_env(tmp_path_factory.mktemp("callables"), _env(CODE), [SCENARIO], {"t1": SOLUTION},
                          sandbox_pool, "cc", rl_export=True)


def _roll(imported: dict[str, Any], plan: list[dict[str, Any]]) -> Any:
    agent = ScriptedAgent([ToolCall(tool=c["name"], args=c["arguments"]) for c in plan])
    return asyncio.run(run_rollout(imported["accepted"][0], imported["promoted"][0], imported["pool"], None,
                                   Settings(), agent=agent))


def test_the_env_is_accepted_and_the_alias_solution_verifies_its_scenario(imported: dict[str, Any]) -> None:
    assert [(e.status, e.reasons) for e in imported["envs"]] == [("accepted", [])]
    assert [s.audit for s in imported["scenarios"]] == ["verified"]


def test_no_note_calls_them_not_callable(imported: dict[str, Any]) -> None:
    assert not [n for n in imported["report"].notes if "no method of the class" in n]


def test_the_rl_rows_own_solution_earns_what_envscaler_gives_in_the_gym(imported: dict[str, Any]) -> None:
    (gym,) = load_rl_set(imported["rl"], imported["pool"])
    gym.reset(options={"scenario_index": 0})
    obs, reward, terminated, truncated, info = gym.step({"tool": "lend", "args": {"book_id": "b1", "member": "Ana"}})
    assert json.loads(obs) == {"success": True} and not terminated
    obs, reward, terminated, truncated, info = gym.step({"tool": "chat_with_user", "args": {"content": "Task Completed"}})
    assert reward == 1.0 and info["all_passed"] is True


@pytest.mark.parametrize("first", ["count", "summary"])
def test_a_lambda_or_a_callable_property_is_called(imported: dict[str, Any], first: str) -> None:
    traj = _roll(imported, [{"name": first, "arguments": {}},
                            {"name": "lend_book", "arguments": {"book_id": "b1", "member": "Ana"}}])
    assert traj.reward == 1.0 and traj.termination != "tool_raised"


def test_a_getter_that_writes_state_is_caught_by_validation(tmp_path: Any, sandbox_pool: Any) -> None:
    out = import_one_env(tmp_path, _env(WRITING_GETTER), [SCENARIO], {"t1": SOLUTION}, sandbox_pool, "cw")
    ((status, reasons),) = [(e.status, e.reasons) for e in out["envs"]]
    assert status == "rejected" and any("summary" in r and "state" in r for r in reasons), reasons


# rt12-B F1: callables the source does not show as such (a partial, a partialmethod, a bound method of a
# value) were taken for data, never probed; the one below lends b1 when "summarised" and the gym paid 1.0.
HIDDEN_WRITERS = {
    "partial": CODE.replace('        return lambda: {"success": True, "data": sorted(self.books)}\n',
                            '        import functools\n        return functools.partial(self.lend_book, "b1", "Ana")\n'),
    "partialmethod": CODE.replace("    count = lambda self:",
                                  "    import functools\n    count = functools.partialmethod(lend_book, 'b1', 'Ana')\n"
                                  "    _unused = lambda self:"),
    "bound method of a value": CODE.replace('        return lambda: {"success": True, "data": sorted(self.books)}\n',
                                            "        return self.books.clear\n"),
}


@pytest.mark.parametrize("form", sorted(HIDDEN_WRITERS))
def test_a_query_whose_value_is_callable_in_a_way_the_source_hides_is_probed(
        tmp_path: Any, sandbox_pool: Any, form: str) -> None:
    out = import_one_env(tmp_path, _env(HIDDEN_WRITERS[form]), [SCENARIO], {"t1": SOLUTION}, sandbox_pool, "ch")
    ((status, reasons),) = [(e.status, e.reasons) for e in out["envs"]]
    assert status == "rejected" and any("summary" in r or "count" in r for r in reasons), reasons


def test_a_property_returning_a_method_is_served_with_that_methods_parameters(tmp_path: Any, sandbox_pool: Any) -> None:
    """rt12-C F2: `@property def lend_prop(self): return self.lend_book` was fitted to the getter's signature
    (`self` alone): step6's empty schema got no `book_id`, a hand-written one lost it, and the env was
    rejected on coverage where EnvScaler plays `lend_prop(book_id=..., member=...)` at 1.0."""
    code = CODE.replace('        return lambda: {"success": True, "data": sorted(self.books)}\n',
                        "        return self.lend_book\n")
    env = {**_env(code), "tools": [_tool("summary", NONE), _tool("lend_book", LEND)],
           "operation_list": [{"operation_name": "summary", "operation_type": "state_change"},
                              {"operation_name": "lend_book", "operation_type": "state_change"}]}
    solution = [{"name": "summary", "arguments": {"book_id": "b1", "member": "Ana"}}]
    out = import_one_env(tmp_path, env, [SCENARIO], {"t1": solution}, sandbox_pool, "cp")
    assert [(e.status, e.reasons) for e in out["envs"]] == [("accepted", [])]
    [served] = [t for t in out["accepted"][0].tools if t.function.name == "summary"]
    assert served.function.parameters["required"] == ["book_id", "member"]


# rt14-A F2 / rt14-B F1: a value the source shows is data but that is callable at run time (a literal rebound
# after the class; a builtin's result whose class makes it callable). Validation does not probe data, and
# the sandbox called what it found: a lookup that lent b1 paid 1.0. Now such a tool is never run.
DATA_MADE_CALLABLE = {
    "literal rebound after the class": CODE.replace("    count = lambda self:", "    count = 0\n    _unused = lambda self:")
    + "\nimport functools\nLibrary.count = functools.partialmethod(Library.lend_book, 'b1', 'Ana')\n",
    "str() of a callable str subclass": CODE.replace(
        '        return lambda: {"success": True, "data": sorted(self.books)}\n',
        "        return str(_Wrap(self))\n") + '''

class _Lends(str):
    def __call__(self, **kwargs):
        return self.env.lend_book("b1", "Ana")


class _Wrap:
    def __init__(self, env):
        self.env = env

    def __str__(self):
        text = _Lends("summary")
        text.env = self.env
        return text
''',
}


@pytest.mark.parametrize("form", sorted(DATA_MADE_CALLABLE))
def test_a_tool_the_source_shows_is_data_is_never_run_even_when_it_is_callable(
        tmp_path: Any, sandbox_pool: Any, form: str) -> None:
    first = "count" if form.startswith("literal") else "summary"
    out = import_one_env(tmp_path, _env(DATA_MADE_CALLABLE[form]), [SCENARIO], {"t1": SOLUTION}, sandbox_pool, "cd",
                         rl_export=True)
    (gym,) = load_rl_set(out["rl"], out["pool"])
    gym.reset(options={"scenario_index": 0})
    obs, reward, terminated, truncated, info = gym.step({"tool": first, "args": {}})
    assert terminated and reward == 0.0 and "not callable" in obs, obs
    traj = _roll(out, [{"name": first, "arguments": {}}])
    assert traj.reward == 0.0 and traj.termination == "tool_raised"
