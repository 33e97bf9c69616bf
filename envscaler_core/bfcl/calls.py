"""Between OpenAI tool calls and BFCL's call strings.

* `decode_tool_calls`: an assistant message's tool calls -> `name(k=repr(v),...)` strings, exactly as
  the package's `convert_to_function_call` (FC mode) builds them. One deliberate difference: BFCL
  `eval`s those strings, so a function name or argument key that is not a Python identifier would be
  code, not a name; such a step is *undecodable* here (BFCL's loop treats an undecodable step as the
  end of the turn, and its checker skips it), so model output can only ever call functions by name
  with literal arguments. The strings still only run inside the sandbox.
* `parse_call`: a ground-truth string back to (name, keyword arguments), for the gold agent and the
  mock LLM; positional arguments are named from the API classes' method signatures, read from the
  package's source with `ast` (never imported or executed on the host).
"""

from __future__ import annotations

import ast
import json
from functools import lru_cache
from typing import Any

from envscaler_core import pyast
from envscaler_core.bfcl.package import CLASS_MODULES, source_dir
from envscaler_core.llm.replies.structured import ReplyProblem
from envscaler_core.llm.replies.tool_calls import checked_arguments
from envscaler_core.models.env import is_python_identifier


class UndecodableCalls(ValueError):
    """An assistant step BFCL could not (or we will not) turn into call strings."""


def decode_tool_calls(tool_calls: list[dict[str, Any]] | None, only: frozenset[str] | None = None) -> list[str]:
    """Call strings for one assistant step; [] when it has no tool calls (the turn ends). With `only`,
    a function not named there is undecodable (our MCP and gym surfaces; BFCL's own loop has no list)."""
    out = []
    for call in tool_calls or []:
        fn = call.get("function") if isinstance(call, dict) else None
        if not isinstance(fn, dict):
            raise UndecodableCalls("a tool call has no function object")
        name, raw = fn.get("name"), fn.get("arguments")
        if only is not None and name not in only:
            raise UndecodableCalls(f"unknown function {str(name)[:80]!r}: not one of this task's functions")
        try:  # strict JSON, as the package's own decoder: no lenient readings here
            args = json.loads(raw) if isinstance(raw, str) else raw
        except RecursionError:
            raise UndecodableCalls(f"arguments of {str(name)[:80]!r} nest too deeply to read") from None
        except ValueError as exc:  # not JSON, or an integer past Python's digit limit
            raise UndecodableCalls(f"arguments of {str(name)[:80]!r} are not JSON: {str(exc)[:200]}") from None
        if not isinstance(args, dict):
            raise UndecodableCalls(f"arguments of {str(name)[:80]!r} are not a JSON object")
        try:
            checked_arguments(args)
        except ReplyProblem as exc:
            raise UndecodableCalls(f"arguments of {str(name)[:80]!r}: {exc}") from None
        if not is_python_identifier(name):
            raise UndecodableCalls(f"function name {str(name)[:80]!r} is not a Python identifier")
        bad = [k for k in args if not is_python_identifier(k)]
        if bad:
            raise UndecodableCalls(f"argument name {str(bad[0])[:80]!r} of {name} is not a Python identifier")
        out.append(f"{name}({','.join(f'{k}={v!r}' for k, v in args.items())})")
    return out


@lru_cache(maxsize=1)
def method_parameters() -> dict[str, dict[str, list[str]]]:
    """{class: {public method: parameter names after self}} from the package's source files."""
    out: dict[str, dict[str, list[str]]] = {}
    for class_name, module in CLASS_MODULES.items():
        tree = pyast.parse((source_dir() / f"{module}.py").read_text(encoding="utf-8"))
        for node in tree.body:
            if isinstance(node, ast.ClassDef) and node.name == class_name:
                out[class_name] = {
                    item.name: [a.arg for a in (*item.args.posonlyargs, *item.args.args)][1:]
                    for item in node.body if isinstance(item, ast.FunctionDef) and not item.name.startswith("_")
                }
    return out


def parse_call(call: str, classes: list[str]) -> tuple[str, dict[str, Any]]:
    """`"sort('a.txt')"` -> `("sort", {"file_name": "a.txt"})` for a task involving `classes`
    (a method name shared by two classes resolves to the later one, as in BFCL's executor)."""
    try:
        node = pyast.parse(call.strip(), mode="eval").body
    except SyntaxError as exc:
        raise ValueError(f"not a call: {call!r} ({exc.msg})") from None
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
        raise ValueError(f"not a plain function call: {call!r}")
    name = node.func.id
    params: list[str] | None = None
    for class_name in classes:
        params = method_parameters().get(class_name, {}).get(name, params)
    try:
        kwargs = {kw.arg: ast.literal_eval(kw.value) for kw in node.keywords if kw.arg is not None}
        positional = [ast.literal_eval(a) for a in node.args]
    except ValueError:
        raise ValueError(f"arguments of {call!r} are not literals") from None
    if positional:
        if params is None or len(positional) > len(params):
            raise ValueError(f"cannot name the positional arguments of {call!r}")
        kwargs = {**dict(zip(params, positional)), **kwargs}
    return name, kwargs
