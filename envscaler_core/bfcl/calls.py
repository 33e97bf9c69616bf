"""Between OpenAI tool calls and BFCL's call strings.

* `decode_tool_calls`: an assistant message's tool calls -> `name(k=repr(v),...)` strings, exactly as
  the package's `convert_to_function_call` (FC mode) builds them, whatever the names and values: a
  name BFCL cannot run (`class` as a key, a tool named `None`, `lambda`, `1`, a JSON null, number or
  boolean as the name, or no name) makes only that call an error when it runs, as in BFCL, and the rest
  of the step runs. Only the package's own decoding
  failures make a step undecodable (BFCL's loop ends the turn there, and its checker skips it):
  arguments that are not a JSON object, or nested too deeply to read or render, a list or object as a
  function name, and a tool call of type `custom` (the SDK reads it as a custom tool call, with no
  function, so BFCL reads no calls in that step). One deliberate
  difference: a function name or argument key holding a lone surrogate (BFCL: the call fails to
  encode) cannot cross the sandbox's JSON wire, so that step is undecodable; so is an argument key that
  is not a Python identifier (it would be spliced into the string as code), argument text naming a key
  twice, and an integer wider than 64 bits (red team 7, F6-F8). The strings run only
  inside the sandbox, where `jail_env.guarded_execute` lets only `method(literals)` reach the package.
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
from envscaler_core.llm.replies.tool_calls import RepeatedKey, unique_pairs
from envscaler_core.signature import parameters
from envscaler_core.wire_values import too_many_values, value_problem


def _shown(name: Any) -> str:
    return repr(str(name)[:80]).encode("ascii", "backslashreplace").decode("ascii")


def _has_lone_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


_NAME_TYPES = (str, int, float, bool, type(None))
"""What a tool call's JSON function name may be for BFCL to build a call string from it: the SDK keeps
the name as sent, BFCL's f-string writes it (`None()`, `1()`), and that call fails alone when it runs.
A list or object name cannot key BFCL's `{name: arguments}` dict, so BFCL reads no calls in that step."""


class UndecodableCalls(ValueError):
    """An assistant step BFCL could not (or we will not) turn into call strings."""


def _argument_problem(name: Any, args: dict[Any, Any]) -> str | None:
    """Why these arguments cannot become `name(key=repr(value), ...)`: a key that is no Python identifier
    would be spliced into the call string as code (red team 7, F6: the key `content='x', file_name` ran
    echo with two arguments while one was recorded), and an integer wider than 64 bits cannot cross the
    sandbox's wire (F8). A keyword key (`class`) is an identifier: BFCL builds it and the call fails alone."""
    for key in args:
        if not isinstance(key, str) or not key.isidentifier():
            shown = _shown(key) if isinstance(key, str) else f"{_shown(key)} ({type(key).__name__})"
            return (f"the call {_shown(name)} has the argument key {shown}, which is not a Python "
                    "identifier (BFCL writes each key into the call string as `key=value`)")
    problem = value_problem(args, str(name))
    return f"arguments of {problem}" if problem else None


def decode_tool_calls(tool_calls: list[dict[str, Any]] | None, only: frozenset[str] | None = None) -> list[str]:
    """Call strings for one assistant step; [] when it has no tool calls (the turn ends). With `only`,
    a function not named there is undecodable (our MCP and gym surfaces; BFCL's own loop has no list)."""
    out = []
    for call in tool_calls or []:
        if isinstance(call, dict) and call.get("type") == "custom":  # the SDK's custom tool call: no `.function`
            raise UndecodableCalls("a tool call of type 'custom' is not a function call")
        fn = call.get("function") if isinstance(call, dict) else None
        if not isinstance(fn, dict):
            raise UndecodableCalls("a tool call has no function object")
        name, raw = fn.get("name"), fn.get("arguments")  # a missing name is None, as the SDK reads it
        if not isinstance(name, _NAME_TYPES):  # BFCL's `{name: arguments}` needs a hashable name
            raise UndecodableCalls(f"a tool call's function name is {type(name).__name__}, not text")
        if only is not None and name not in only:
            raise UndecodableCalls(f"unknown function {_shown(name)}: not one of this task's functions")
        if isinstance(raw, str) and (too_many := too_many_values(raw)) is not None:  # red team 8, F2
            raise UndecodableCalls(f"arguments of {_shown(name)} {too_many}")
        try:  # strict JSON, as the package's own decoder: no lenient readings here
            args = json.loads(raw, object_pairs_hook=unique_pairs) if isinstance(raw, str) else raw
        except RepeatedKey as exc:  # F7: as import and the sandbox's wire refuse it
            raise UndecodableCalls(f"arguments of {_shown(name)} name the key {_shown(exc)} twice (JSON readers "
                                   "silently keep one)") from None
        except RecursionError:
            raise UndecodableCalls(f"arguments of {_shown(name)} nest too deeply to read") from None
        except ValueError as exc:  # not JSON, or an integer past Python's digit limit
            raise UndecodableCalls(f"arguments of {_shown(name)} are not JSON: {str(exc)[:200]}") from None
        if not isinstance(args, dict):
            raise UndecodableCalls(f"arguments of {_shown(name)} are not a JSON object")
        for text in (str(name), *(k for k in args if isinstance(k, str))):  # other keys: _argument_problem
            if _has_lone_surrogate(text):
                raise UndecodableCalls(f"the call {_shown(name)} has a name holding text that is not valid Unicode "
                                       "(a lone surrogate), which the sandbox cannot carry")
        if (problem := _argument_problem(name, args)) is not None:
            raise UndecodableCalls(problem)
        try:  # BFCL's own f-string: repr escapes a lone surrogate in a value, so the string is always valid
            out.append(f"{name}({','.join(f'{k}={v!r}' for k, v in args.items())})")
        except RecursionError:
            raise UndecodableCalls(f"arguments of {_shown(name)} nest too deeply to render") from None
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
                    item.name: [a.arg for a in parameters(item, bound=True).positional]
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
