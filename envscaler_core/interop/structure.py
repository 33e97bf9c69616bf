"""The descriptive fields of EnvScaler's env record, derived from one of our environments.

EnvScaler's scenario generator reads `env_structure` (which attributes exist, their types, which
methods read and write them), `env_class_def` (the source through `__init__`), `operation_list`
and `state_space_definition`; our records keep the spec and the code, so these are computed here,
following the behaviour documented in ../shared/reference/envscaler_skel_builder.md §2.6.
"""

from __future__ import annotations

import ast
import textwrap
from typing import Any

from envscaler_core import pyast
from envscaler_core.models.env import AcceptedEnv
from envscaler_core.models.spec import EnvSpec

MUTATORS = {"append", "extend", "insert", "update", "clear", "pop", "remove", "discard", "setdefault"}


def class_def(code: str, class_name: str) -> str:
    """From the file start through `__init__`'s body, up to the next `def ` (EnvScaler's cut)."""
    head = f"class {class_name}"
    at = code.find(head)
    if at < 0:
        return code
    init = code.find("def __init__", at)
    if init < 0:
        nxt = code.find("def ", at)
        return code if nxt < 0 else code[:nxt]
    nxt = code.find("def ", init + len("def __init__"))
    return code if nxt < 0 else code[:nxt]


def _annotation(node: ast.AST | None) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Subscript):
        inner = node.slice
        parts = inner.elts if isinstance(inner, ast.Tuple) else [inner]
        return f"{_annotation(node.value)}[{', '.join(_annotation(p) for p in parts)}]"
    if isinstance(node, ast.Constant):
        return type(node.value).__name__
    return "unknown"


def _self_root(node: ast.AST) -> str | None:
    """`self.x`, `self.x[...]`, `self.x.y(...)` -> "x"."""
    while True:
        if isinstance(node, ast.Attribute):
            if isinstance(node.value, ast.Name) and node.value.id == "self":
                return node.attr
            node = node.value
        elif isinstance(node, ast.Subscript):
            node = node.value
        elif isinstance(node, ast.Call):
            node = node.func
        else:
            return None


def env_structure(code: str, class_name: str) -> dict[str, Any]:
    """`{"states": {attr: {type, used_by, modified_by}}, "methods": {m: {calls, reads, writes}}}`, sorted lists."""
    try:
        tree = pyast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return {"states": {}, "methods": {}}
    cls = next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == class_name), None)
    if cls is None:
        return {"states": {}, "methods": {}}
    states: dict[str, dict[str, Any]] = {}

    def state(name: str) -> dict[str, Any]:
        return states.setdefault(name, {"type": None, "used_by": set(), "modified_by": set()})

    for stmt in cls.body:
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
            state(stmt.target.id)["type"] = _annotation(stmt.annotation)
        elif isinstance(stmt, ast.Assign):
            for target in stmt.targets:
                if isinstance(target, ast.Name) and state(target.id)["type"] is None:
                    state(target.id)["type"] = _annotation(stmt.value)
        elif isinstance(stmt, ast.FunctionDef) and stmt.name == "__init__":
            for node in ast.walk(stmt):
                if isinstance(node, ast.AnnAssign) and _is_self_attr(node.target):
                    state(node.target.attr)["type"] = _annotation(node.annotation)  # type: ignore[union-attr]
                elif isinstance(node, ast.Assign):
                    for target in node.targets:
                        if _is_self_attr(target) and state(target.attr)["type"] is None:  # type: ignore[union-attr]
                            state(target.attr)["type"] = _annotation(node.value)  # type: ignore[union-attr]
    methods: dict[str, dict[str, set[str]]] = {}
    for fn in cls.body:
        if not isinstance(fn, ast.FunctionDef) or fn.name == "__init__":
            continue
        m = methods.setdefault(fn.name, {"calls": set(), "reads": set(), "writes": set()})
        for node in ast.walk(fn):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                if isinstance(node.func.value, ast.Name) and node.func.value.id == "self":
                    m["calls"].add(node.func.attr)
                root = _self_root(node.func.value)
                if root and node.func.attr in MUTATORS:
                    _write(state(root), m, root, fn.name)
            if isinstance(node, (ast.Attribute, ast.Subscript)) and isinstance(getattr(node, "ctx", None), ast.Load):
                root = _self_root(node)
                if root:
                    state(root)["used_by"].add(fn.name)
                    m["reads"].add(root)
            targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target] if isinstance(node, ast.AugAssign) else []
            for target in targets:
                root = _self_root(target)
                if root:
                    _write(state(root), m, root, fn.name)
    return {"states": {k: {"type": v["type"], "used_by": sorted(v["used_by"]), "modified_by": sorted(v["modified_by"])}
                       for k, v in states.items()},
            "methods": {k: {key: sorted(v[key]) for key in ("calls", "reads", "writes")} for k, v in methods.items()}}


def _is_self_attr(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self"


def _write(state: dict[str, Any], method: dict[str, set[str]], root: str, name: str) -> None:
    state["modified_by"].add(name)
    method["writes"].add(root)


def operation_list(env: AcceptedEnv, spec: EnvSpec | None) -> list[dict[str, Any]]:
    """One entry per tool, in tool order: the spec's description and kind when it has them."""
    from envscaler_core.synth.tool_schema import method_sources

    try:
        sources = method_sources(env.class_code, env.class_name)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        sources = {}
    ops = {op.name: op for op in spec.operations} if spec else {}
    out = []
    for tool in env.tools:
        name = tool.function.name
        op = ops.get(name)
        out.append({"operation_name": name,
                    "operation_description": op.description if op else tool.function.description,
                    "operation_type": op.kind if op else env.tool_kinds.get(name, "state_change"),
                    "code": textwrap.dedent(sources.get(name, "")).strip()})
    return out


def state_space(spec: EnvSpec | None) -> list[dict[str, str]]:
    """EnvScaler's shape: `attributes` is one comma-separated string."""
    if spec is None:
        return []
    return [{"entity": e.name, "attributes": ", ".join(e.attributes), "description": e.description} for e in spec.entities]


def env_record(env: AcceptedEnv, spec: EnvSpec | None) -> dict[str, Any]:
    """EnvScaler's final env metadata record, keys in its order."""
    return {
        "env_id": env.env_id,
        "environment_summary": env.summary,
        "environment_introduction": env.introduction,
        "state_space_definition": state_space(spec),
        "constraints_rules": list(env.rules),
        "operation_list": operation_list(env, spec),
        "env_class_name": env.class_name,
        "env_class_code": env.class_code,
        "env_class_def": class_def(env.class_code, env.class_name),
        "env_structure": env_structure(env.class_code, env.class_name),
        "tools": [t.model_dump(mode="json") for t in env.tools],
    }
