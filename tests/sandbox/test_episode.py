"""Episodes on a legitimate env: results, state, diffs, schema rejections, restarts, concurrency."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from envscaler_core.runtime import EnvLoadError
from sandbox import SandboxPool
from tests.sandbox.helpers import apply_diff, attack_code, children_of
from tests.sandbox.inventory_env import INVENTORY_CODE, INVENTORY_STATE, INVENTORY_TOOLS


def _plan() -> list[tuple[str, dict[str, Any]]]:
    calls: list[tuple[str, dict[str, Any]]] = [("list_items", {}), ("get_item", {"sku": "a1"})]
    for i in range(6):
        calls += [("add_item", {"sku": f"s{i}", "name": f"thing {i}", "qty": i, "tags": ["t"] * (i % 2)}),
                  ("restock", {"sku": f"s{i}", "qty": 3}),
                  ("order", {"sku": f"s{i}", "qty": 2, "priority": "high"})]
    calls += [("order", {"sku": "a1", "qty": 99}), ("remove_item", {"sku": "b2"}), ("get_item", {"sku": "b2"}),
              ("remove_item", {"sku": "s0"}), ("add_item", {"sku": "a1", "name": "dup"}),
              ("restock", {"sku": "a1", "qty": 0}), ("order", {"sku": "a1", "qty": 10}),
              ("get_item", {"sku": "a1"}), ("list_items", {}), ("restock", {"sku": "zz", "qty": 1})]
    assert len(calls) == 30
    return calls


def _reference_run(plan: list[tuple[str, dict[str, Any]]]) -> tuple[list[Any], dict[str, Any]]:
    """The same trusted test env run in-process, as the oracle."""
    ns: dict[str, Any] = {}
    exec(INVENTORY_CODE, ns)
    inst = ns["Inventory"](json.loads(json.dumps(INVENTORY_STATE)))
    results = [json.loads(json.dumps(getattr(inst, tool)(**args))) for tool, args in plan]
    return results, json.loads(json.dumps({k: v for k, v in vars(inst).items() if not k.startswith("_")}))


def test_a_30_call_episode_matches_the_in_process_run(sandbox_pool: SandboxPool) -> None:
    plan = _plan()
    expected_results, expected_state = _reference_run(plan)
    with sandbox_pool.open_episode(INVENTORY_CODE, "Inventory", INVENTORY_STATE, tools=INVENTORY_TOOLS) as ep:
        assert ep.state == INVENTORY_STATE
        state = ep.state
        for (tool, args), expected in zip(plan, expected_results):
            out = ep.call(tool, args)
            assert out.ok and out.result == expected, (tool, args, out)
            assert apply_diff(state, out.state_diff) == out.state, "the diff does not explain the new state"
            if out.state == state:
                assert out.state_diff == {}
            state = out.state
        assert ep.state == expected_state == state


def test_diffs_name_exact_paths(sandbox_pool: SandboxPool) -> None:
    with sandbox_pool.open_episode(INVENTORY_CODE, "Inventory", INVENTORY_STATE, tools=INVENTORY_TOOLS) as ep:
        out = ep.call("order", {"sku": "a1", "qty": 3})
        assert out.state_diff == {"changes": [
            {"op": "replace", "path": "/items/a1/qty", "old": 10, "new": 7},
            {"op": "add", "path": "/orders/0", "new": {"sku": "a1", "qty": 3, "priority": "normal"}},
        ]}
        out = ep.call("remove_item", {"sku": "b2"})
        assert out.state_diff["changes"][0]["op"] == "remove" and out.state_diff["changes"][0]["path"] == "/items/b2"


def test_private_attributes_are_not_state(sandbox_pool: SandboxPool) -> None:
    with sandbox_pool.open_episode(INVENTORY_CODE, "Inventory", INVENTORY_STATE) as ep:
        out = ep.call("list_items", {})
        assert out.ok and "_calls" not in out.state and out.state_diff == {}


@pytest.mark.parametrize("tool, args, needle", [
    ("delete_everything", {}, "unknown tool"),
    ("_calls", {}, "private"),
    ("__init__", {}, "dunder"),
    ("get_item", {}, "missing required argument 'sku'"),
    ("get_item", {"sku": "a1", "force": True}, "unexpected argument 'force'"),
    ("restock", {"sku": "a1", "qty": "3"}, "expected integer, got string"),
    ("restock", {"sku": "a1", "qty": True}, "expected integer, got boolean"),
    ("restock", {"sku": None, "qty": 1}, "expected string, got null"),
    ("order", {"sku": "a1", "qty": 1, "priority": "urgent"}, "is not one of"),
    ("add_item", {"sku": "x", "name": "y", "tags": ["ok", 3]}, "tags[1]: expected string"),
])
def test_schema_rejections_leave_the_episode_usable(sandbox_pool: SandboxPool, tool: str, args: dict, needle: str) -> None:
    with sandbox_pool.open_episode(INVENTORY_CODE, "Inventory", INVENTORY_STATE, tools=INVENTORY_TOOLS) as ep:
        out = ep.call(tool, args)
        assert (out.ok, out.error_kind) == (False, "schema")
        assert needle in out.error
        assert out.state == INVENTORY_STATE and out.state_diff == {}
        assert ep.call("restock", {"sku": "a1", "qty": 1}).result == {"success": True, "data": 11}


@pytest.mark.parametrize("tool, args, needle", [
    ("_calls", {}, "private"),
    ("__class__", {}, "dunder"),
    ("items", {}, "not a method"),
    ("nope", {}, "unknown tool"),
    ("get_item", {"sku": "a1", "extra": 1}, "unexpected keyword"),
])
def test_without_schemas_names_and_signatures_are_still_checked(sandbox_pool: SandboxPool, tool: str,
                                                                 args: dict, needle: str) -> None:
    with sandbox_pool.open_episode(INVENTORY_CODE, "Inventory", INVENTORY_STATE) as ep:
        out = ep.call(tool, args)
        assert (out.ok, out.error_kind) == (False, "schema") and needle in out.error


def test_an_exception_reports_a_traceback_tail_and_rolls_back(sandbox_pool: SandboxPool) -> None:
    code = "class E:\n    def __init__(self, init_config=None):\n        self.n = 0\n" \
           "    def boom(self) -> dict:\n        self.n = 5\n        raise ValueError('bad thing')\n"
    with sandbox_pool.open_episode(code, "E", None) as ep:
        out = ep.call("boom", {})
        assert (out.ok, out.error_kind) == (False, "exception")
        assert "ValueError: bad thing" in out.error and 'File "<env>", line 6, in boom' in out.error
        assert out.state == {"n": 0} and ep.state == {"n": 0}


@pytest.mark.parametrize("code, name, needle", [
    ("class A(:\n", "A", "SyntaxError"),
    ("class A:\n    pass\n", "B", "no class named 'B'"),
    ("class A:\n    def __init__(self, init_config):\n        raise KeyError('cfg')\n", "A", "KeyError"),
    ("import nonexistent_mod\n", "A", "ModuleNotFoundError"),
    ("class A:\n    def __init__(self, init_config=None):\n        self.f = lambda: 1\n", "A", "not JSON-serialisable"),
])
def test_load_errors_are_env_load_errors(sandbox_pool: SandboxPool, code: str, name: str, needle: str) -> None:
    with pytest.raises(EnvLoadError, match=needle):
        sandbox_pool.open_episode(code, name, {})


def test_init_without_argument_gets_state_as_attributes(sandbox_pool: SandboxPool) -> None:
    code = "class A:\n    def __init__(self):\n        self.x = 1\n    def get(self) -> dict:\n        return {'x': self.x, 'y': self.y}\n"
    with sandbox_pool.open_episode(code, "A", {"y": 2}) as ep:
        assert ep.state == {"x": 1, "y": 2}
        assert ep.call("get", {}).result == {"x": 1, "y": 2}


def test_timeout_kills_the_process_and_the_episode_continues_from_the_last_state(jail: SandboxPool) -> None:
    code = attack_code("while True:\n    pass")
    with jail.open_episode(code, "Attack", {"n": 0}) as ep:
        assert ep.call("ping", {}).result["data"] == 1
        out = ep.call("attack", {})
        assert (out.ok, out.error_kind) == (False, "timeout") and out.state == {"n": 1}
        assert ep.call("ping", {}).result["data"] == 2
        assert ep.restarts == 1


def test_a_dead_zygote_is_replaced(jail: SandboxPool) -> None:
    code = attack_code("return 1")
    eps = [jail.open_episode(code, "Attack", {"n": 0}) for _ in range(len(jail.zygotes))]
    try:
        for ep in eps:
            assert ep.call("ping", {}).ok
        victim = jail.zygotes[0]
        zygote_pid = next(p for p in children_of(victim.pid)
                          if b"worker.py" in Path(f"/proc/{p}/cmdline").read_bytes())
        os.kill(zygote_pid, signal.SIGKILL)
        victim.proc.wait(timeout=5)  # the jail tears itself down when its zygote dies
        # the dead jail is no verdict on the code: its episodes' calls run again in a fresh process,
        # rebuilt from their last good state, and report no crash
        outcomes = [ep.call("ping", {}) for ep in eps]
        assert all(o.ok for o in outcomes), [o.error for o in outcomes if not o.ok]
        assert any(ep.restarts >= 1 for ep in eps), "an episode of the dead jail should have been rebuilt"
        fresh = jail.open_episode(code, "Attack", {"n": 5})
        with fresh:
            for _ in range(len(jail.zygotes)):
                assert fresh.call("ping", {}).ok
        assert victim.restarts >= 1
    finally:
        for ep in eps:
            ep.close()


def test_episodes_are_safe_to_use_from_many_threads(sandbox_pool: SandboxPool) -> None:
    def work(i: int) -> int:
        with sandbox_pool.open_episode(INVENTORY_CODE, "Inventory", INVENTORY_STATE, tools=INVENTORY_TOOLS) as ep:
            for _ in range(10):
                ep.call("restock", {"sku": "a1", "qty": i + 1})
            return ep.state["items"]["a1"]["qty"]

    with ThreadPoolExecutor(8) as ex:
        results = list(ex.map(work, range(16)))
    assert results == [10 + 10 * (i + 1) for i in range(16)]


def test_closed_episode_refuses_calls(sandbox_pool: SandboxPool) -> None:
    ep = sandbox_pool.open_episode(INVENTORY_CODE, "Inventory", INVENTORY_STATE)
    ep.close()
    out = ep.call("list_items", {})
    assert not out.ok and "closed" in out.error


def test_a_forgotten_episode_does_not_leave_a_live_process(jail: SandboxPool, baseline: int) -> None:
    import gc

    from tests.sandbox.helpers import wait_for_process_count

    ep = jail.open_episode(attack_code("return 1"), "Attack", {"n": 0})
    assert ep.call("ping", {}).ok
    del ep
    gc.collect()
    assert wait_for_process_count(jail, baseline) == baseline


# ---- loading exactly as EnvScaler's runtime does (construct with the config, then setattr every key) ----

def test_an_envscaler_style_class_runs_on_the_state_it_was_given(sandbox_pool: SandboxPool) -> None:
    from tests.sandbox.envscaler_style import LIBRARY_CODE, LIBRARY_STATE

    with sandbox_pool.open_episode(LIBRARY_CODE, "LibraryDesk", LIBRARY_STATE) as ep:
        assert ep.state["books"] == LIBRARY_STATE["books"] and ep.state["members"] == LIBRARY_STATE["members"]
        assert ep.call("get_book", {"book_id": "B1"}).result["data"]["title"] == "Dune"
        lent = ep.call("lend_book", {"book_id": "B1", "member_id": "M1"})
        assert lent.result["success"] is True
        assert ep.call("lend_book", {"book_id": "B2", "member_id": "M1"}).result == {
            "success": False, "error": "no copies left"}


def test_the_stored_init_config_aliases_the_live_containers_as_in_envscaler(sandbox_pool: SandboxPool) -> None:
    """EnvScaler constructs and sets every key from one deep copy, so a stored `init_config` drifts with
    the state; a check written against its runtime sees the same."""
    from tests.sandbox.envscaler_style import LIBRARY_CODE, LIBRARY_STATE

    with sandbox_pool.open_episode(LIBRARY_CODE, "LibraryDesk", LIBRARY_STATE) as ep:
        assert ep.state["init_config"] == LIBRARY_STATE
        out = ep.call("lend_book", {"book_id": "B1", "member_id": "M1"})
        assert out.state["books"]["B1"]["copies_available"] == 1
        assert out.state["init_config"]["books"] == out.state["books"]
        assert out.state["init_config"]["members"]["M1"]["borrowed"] == ["B1"]


INDEXED = """
class Directory:
    def __init__(self, init_config):
        self.users = init_config.get("users", {})
        self.by_email = {u["email"]: u for u in self.users.values()}

    def update_email(self, old: str, new: str) -> dict:
        self.by_email[old]["email"] = new
        return {"success": True, "message": "updated"}

    def get_user(self, user_id: str) -> dict:
        return {"success": True, "data": self.users[user_id]}
"""


def test_an_index_built_in_the_constructor_still_points_into_the_state(sandbox_pool: SandboxPool) -> None:
    """The keys set after construction are the very objects the constructor indexed (one copy, as in
    EnvScaler), so a write through the index is a write to the state."""
    state = {"users": {"u1": {"email": "a@x.io"}}}
    with sandbox_pool.open_episode(INDEXED, "Directory", state) as ep:
        out = ep.call("update_email", {"old": "a@x.io", "new": "new@x.io"})
        assert out.state["users"]["u1"]["email"] == "new@x.io"
        assert ep.call("get_user", {"user_id": "u1"}).result == {"success": True, "data": {"email": "new@x.io"}}


def test_a_constructor_that_rejects_the_config_falls_back_to_no_arguments(sandbox_pool: SandboxPool) -> None:
    code = ("class A:\n    def __init__(self):\n        self.items = {}\n"
            "    def count(self) -> dict:\n        return {'success': True, 'data': len(self.items)}\n")
    with sandbox_pool.open_episode(code, "A", {"items": {"x": 1, "y": 2}}) as ep:
        assert ep.call("count", {}).result == {"success": True, "data": 2}


def test_a_constructor_that_normalises_its_config_in_place_loads_as_the_reference_does(sandbox_pool: SandboxPool) -> None:
    """EnvScaler's runtime gives the constructor and the setattr one copy: a class that sorts its list or
    fills defaults through it holds the normalised objects, and that is a load, not a swallowed key."""
    code = ("class A:\n    def __init__(self, config):\n        self.users = config.get('users', [])\n"
            "        self.users.sort(key=lambda u: u['name'])\n"
            "        for u in self.users:\n            u.setdefault('status', 'active')\n")
    with sandbox_pool.open_episode(code, "A", {"users": [{"name": "z"}, {"name": "a", "status": "gone"}]}) as ep:
        assert ep.state == {"users": [{"name": "a", "status": "gone"}, {"name": "z", "status": "active"}]}


@pytest.mark.parametrize("code, needle", [
    ("class A:\n    __slots__ = ('__dict__',)\n    def __setattr__(self, k, v):\n        pass\n",
     "initial state did not load: attribute 'items' is missing after loading"),
    ("class A:\n    def __init__(self, init_config=None):\n        object.__setattr__(self, 'items', {})\n"
     "    def __setattr__(self, k, v):\n        object.__setattr__(self, k, {} if k == 'items' else v)\n",
     "initial state did not load: attribute 'items' holds dict of 0 entries after loading, but the config gives "
     "dict of 2 entries"),
])
def test_a_state_that_did_not_load_is_a_load_error(sandbox_pool: SandboxPool, code: str, needle: str) -> None:
    with pytest.raises(EnvLoadError, match=needle):
        sandbox_pool.open_episode(code, "A", {"items": {"x": 1, "y": 2}})


def test_a_property_without_setter_named_like_a_config_key_is_a_load_error(sandbox_pool: SandboxPool) -> None:
    code = "class A:\n    @property\n    def items(self):\n        return {}\n"
    with pytest.raises(EnvLoadError, match="AttributeError"):
        sandbox_pool.open_episode(code, "A", {"items": {"x": 1}})
