"""Probe values for a parameter that takes a dict (`updates: Dict[str, Any]`, `dict`, `Mapping`,
`Optional[Dict[str, Any]]`, a TypedDict): objects holding the keys the method's code accepts.

A tool that accepts only some keys (`allowed = {"phone", "email"}`) refused every probe when it was sent one
field of a record (`{"name": "Ann"}`) or `{}`, and its env was rejected on coverage although a scenario's
state allowed the call (outside check rt22-R13, F1). So a dict parameter is tried first with the keys a
`**fields` tool is tried with (`param_options.keyword_candidates`: fields of the records the other parameters
name, those the code spells out as strings first, each with a value a record holds), and a TypedDict
parameter (whose schema is a bare `object` in EnvScaler's step6) with all its declared keys, a key the code
checks against a container (`item.get("sku") in self.catalog`) taking that container's keys."""

from __future__ import annotations

import ast
from typing import Any

from envscaler_core.validation.param_options import (
    MAX_CANDIDATES, ParamOptions, keyword_candidates, kind_defaults, typed_values,
)
from envscaler_core.validation.state_values import RecordSet, dedup, values_under

_KINDS = {"int": "integer", "str": "string", "float": "number", "bool": "boolean", "list": "array", "List": "array",
          "dict": "object", "Dict": "object", "tuple": "array", "Tuple": "array", "set": "array", "Set": "array"}
_WRAPPERS = {"Optional", "Required", "NotRequired", "ReadOnly", "Annotated"}


def typed_dict_fields(tree: ast.Module) -> dict[str, dict[str, str]]:
    """The module's TypedDict classes: class name -> declared key -> its JSON kind (`string` when unknown)."""
    out: dict[str, dict[str, str]] = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and any(_name(b) == "TypedDict" for b in node.bases):
            out[node.name] = {s.target.id: _kind(s.annotation) for s in node.body
                              if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)}
    return out


def object_candidates(param: str, fn: ast.FunctionDef | ast.AsyncFunctionDef | None,
                      typed_dicts: dict[str, dict[str, str]], options: dict[str, ParamOptions],
                      sets: list[RecordSet], state: dict[str, Any]) -> list[dict[str, Any]]:
    """Objects worth trying for the dict parameter `param` of method `fn`, best first (see the module)."""
    if fn is None:
        return []
    annotation = next((a.annotation for a in [*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs]
                       if a.arg == param), None)
    fields = typed_dicts.get(_name(_unwrapped(annotation)) or "")
    if fields is None:
        return keyword_candidates({n: o for n, o in options.items() if n != param}, sets, fn, set(), MAX_CANDIDATES)
    item: dict[str, Any] = {}
    for key, kind in fields.items():
        values = _checked_against(fn, key, state) + typed_values(values_under(state, key), kind)
        item[key] = (dedup(values) or kind_defaults(key, kind, state))[0]
    return [item]


def _checked_against(fn: ast.AST, key: str, state: dict[str, Any]) -> list[Any]:
    """Keys of the state containers the code tests a value read under `key` against (`item.get("sku") in
    self.catalog`, `item["sku"] not in self.catalog`): the values that pass such a test."""
    out: list[Any] = []
    for node in ast.walk(fn):
        if not (isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ast.In | ast.NotIn)):
            continue
        if not any(isinstance(n, ast.Constant) and n.value == key for n in ast.walk(node.left)):
            continue
        target = node.comparators[0]
        if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self":
            held = state.get(target.attr)
            out += list(held) if isinstance(held, dict) else [v for v in held or [] if not isinstance(v, dict | list)] \
                if isinstance(held, list) else []
    return out


def _unwrapped(node: ast.expr | None) -> ast.expr | None:
    """`Optional[X]` (and `Required[X]`, ...) as `X`; `X | None` as `X`."""
    while isinstance(node, ast.Subscript) and _name(node.value) in _WRAPPERS:
        node = node.slice.elts[0] if isinstance(node.slice, ast.Tuple) else node.slice
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        node = node.left if not (isinstance(node.left, ast.Constant) and node.left.value is None) else node.right
    return node


def _name(node: ast.expr | None) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value  # a quoted annotation naming a class
    return None


def _kind(annotation: ast.expr) -> str:
    node = _unwrapped(annotation)
    if isinstance(node, ast.Subscript):
        node = node.value
    return _KINDS.get(_name(node) or "", "string")
