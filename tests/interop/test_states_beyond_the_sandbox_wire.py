"""Spec: a reference solution whose call leaves a state the sandbox's wire cannot carry (nested deeper than its
64 levels, in dicts or in lists) leaves the scenario `unproven` with a reason naming that limit as the sandbox's,
not EnvScaler's runtime, which keeps such a state and runs the call (outside check rt22-R13, F5: `grow(300)` on a
50-level tree read "the reference solution has no call EnvScaler's runtime accepts", where EnvScaler plays it at
1.0). docs/interop.md, Known limits, says so."""

from __future__ import annotations

from typing import Any

import pytest

from tests.interop.conftest import import_one_env

TREE = '''class Tree:
    def __init__(self, init_config: dict):
        self.root = {}
        self.size = 0

    def get_size(self) -> dict:
        """Get the size of the tree."""
        return {"success": True, "data": self.size}

    def grow(self, levels: int) -> dict:
        """Grow the tree by some levels."""
        if levels < 1 or levels > 100:
            return {"success": False, "error": "bad levels"}
        node = self.root
        while "child" in node:
            node = node["child"]
        for i in range(levels):
            node["child"] = {"n": self.size + i}
            node = node["child"]
        self.size += levels
        return {"success": True, "data": self.size}
'''
LISTS = '''class Stack:
    def __init__(self, init_config: dict):
        self.items = []
        self.wraps = 0

    def count(self) -> dict:
        """How many times the stack was wrapped."""
        return {"success": True, "data": self.wraps}

    def wrap(self, times: int) -> dict:
        """Wrap the stack in new lists."""
        if times < 1 or times > 100:
            return {"success": False, "error": "bad times"}
        for _ in range(times):
            self.items = [self.items]
        self.wraps += times
        return {"success": True, "data": self.wraps}
'''


def _env(env_id: str, name: str, code: str, query: str, change: str, param: str, kind: str) -> dict[str, Any]:
    params = {"type": "object", "properties": {param: {"type": kind}}, "required": [param]}
    return {"env_id": env_id, "environment_introduction": "An env.", "constraints_rules": [], "env_class_name": name,
            "env_class_code": code,
            "tools": [{"type": "function", "function": {"name": query, "description": query,
                                                        "parameters": {"type": "object", "properties": {}}}},
                      {"type": "function", "function": {"name": change, "description": change, "parameters": params}}],
            "operation_list": [{"operation_name": query, "operation_type": "query"},
                               {"operation_name": change, "operation_type": "state_change"}]}


def _nested(levels: int) -> dict[str, Any]:
    node: dict[str, Any] = {}
    root = node
    for i in range(levels):
        node["child"] = {"n": i}
        node = node["child"]
    return root


CASES = {
    "deep": (_env("env_deep", "Tree", TREE, "get_size", "grow", "levels", "integer"),
             {"root": _nested(50), "size": 50}, "def check_func(final_state):\n    return final_state['size'] == 80",
             [{"name": "grow", "arguments": {"levels": 30}}], "nesting deeper than 64 levels"),
    "lists": (_env("env_lists", "Stack", LISTS, "count", "wrap", "times", "integer"),
              {"items": [], "wraps": 0}, "def check_func(final_state):\n    return final_state['wraps'] == 70",
              [{"name": "wrap", "arguments": {"times": 70}}], "nesting deeper than 64 levels"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_reason_names_the_sandboxs_limit_not_envscalers_runtime(
        case: str, tmp_path_factory: pytest.TempPathFactory, sandbox_pool: Any) -> None:
    env, config, check, solution, says = CASES[case]
    record = {"env_id": env["env_id"], "env_class_name": env["env_class_name"], "task_id": "t1", "init_config": config,
              "task": "Do it.", "checklist": ["done"], "checklist_with_func": [{"check_item": "done", "check_func": check}]}
    got = import_one_env(tmp_path_factory.mktemp(case), env, [record], {"t1": solution}, sandbox_pool, case)
    assert [(e.status, e.reasons) for e in got["envs"]] == [("accepted", [])]
    (scenario,) = got["scenarios"]
    reason = " ".join(scenario.reasons)
    assert scenario.audit == "unproven", reason
    assert f"call 1 of 1, {solution[0]['name']}, leaves a state the sandbox cannot carry" in reason, reason
    assert says in reason and "docs/sandbox.md" in reason and "not of EnvScaler's runtime" in reason
    assert "no call EnvScaler's runtime accepts" not in reason and "fails under EnvScaler's runtime" not in reason
