"""The mock's Stage 3 roles: the test state, the proposer's exploration policy and an honest,
rule-based judge that decides only from the facts in its payload (never from knowing which library
domain is defective)."""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from typing import Any

from mock_llm.lookup import by_class, by_tools, class_in, need
from mock_llm.protocol import MockCannotAnswer
from envscaler_core.prompts import validate as PV


def test_state(inp: PV.StateInput) -> dict[str, Any]:
    domain = need(by_class(inp.class_name) or by_class(class_in(inp.class_code)), "class")
    states = domain.initial_states
    index = inp.variation % len(states)
    return {"analysis": f"Library state {index} of {domain.name}.", "state": copy.deepcopy(states[index])}


def _values(state: Any, key: str, out: list[Any] | None = None) -> list[Any]:
    """Distinct scalars stored under `key` anywhere in the state, depth first in dict order, plus the
    elements of lists stored under `available_<key>s` (e.g. a doctor's open slots) ahead of them."""
    out = [] if out is None else out
    if isinstance(state, dict):
        options = state.get(f"available_{key}s")
        if isinstance(options, list):
            out.extend(o for o in options if isinstance(o, str | int | float) and o not in out)
        value = state.get(key)
        if isinstance(value, str | int | float | bool) and value not in out:
            out.append(value)
        children = list(state.values())
    elif isinstance(state, list):
        children = state
    else:
        return out
    for child in children:
        if isinstance(child, dict | list):
            _values(child, key, out)
    return out


_DEFAULTS: dict[str, Any] = {"string": "sample", "integer": 1, "number": 1.0, "boolean": True, "array": [],
                             "object": {}, "any": "sample"}
_WRONG_TYPE: dict[str, Any] = {"string": 12345, "integer": "not-a-number", "number": "not-a-number",
                               "boolean": "maybe", "array": "not-a-list", "object": "not-an-object", "any": None}


def _fits(value: Any, ptype: str) -> bool:
    checks: dict[str, Callable[[Any], bool]] = {
        "string": lambda v: isinstance(v, str), "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
        "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
        "boolean": lambda v: isinstance(v, bool), "array": lambda v: isinstance(v, list),
        "object": lambda v: isinstance(v, dict),
    }
    return checks.get(ptype, lambda v: True)(value)


def _positive_value(name: str, ptype: str, state: dict[str, Any], hints: dict[str, Any], k: int) -> Any:
    """The k-th distinct value the state holds for this parameter (so repeated cases explore different
    entities), else a domain hint, else a default of the right type."""
    base = name.removeprefix("new_")
    found = [v for v in _values(state, base if base != name else name) if _fits(v, ptype)]
    if not found and base != name:
        found = [v for v in _values(state, name) if _fits(v, ptype)]
    if found:
        return found[k % len(found)]
    for hint in (hints.get(name), hints.get(base)):
        if hint is not None and _fits(hint, ptype):
            return hint
    return _DEFAULTS.get(ptype, "sample")


def _schema_type(prop: dict[str, Any]) -> str:
    """A parameter's JSON type, nullable unions reduced to their non-null member ('any' when unknown)."""
    options = prop.get("type") or [o.get("type") for o in prop.get("anyOf", []) if isinstance(o, dict)]
    options = [options] if isinstance(options, str) else options
    return next((t for t in options if isinstance(t, str) and t != "null"), "any")


def parse_tool_schema(schema: dict[str, Any]) -> tuple[str, list[tuple[str, str]]]:
    """A function schema (`{"name", "parameters": {"properties": ...}}`, or the OpenAI tool wrapper
    around it) -> (name, [(param, type), ...]) in the schema's parameter order."""
    fn = schema.get("function", schema)
    props = (fn.get("parameters") or {}).get("properties") or {}
    return str(fn.get("name", "")), [(p, _schema_type(v if isinstance(v, dict) else {})) for p, v in props.items()]


def propose_call(inp: PV.ProposeInput) -> dict[str, Any]:
    if not inp.tool_schemas:
        raise MockCannotAnswer("propose_call: the tool list is empty")
    parsed = [parse_tool_schema(schema) for schema in inp.tool_schemas]
    domain = by_tools({name for name, _ in parsed})
    hints = domain.example_values if domain is not None else {}

    def tested(name: str) -> int:
        return inp.stats[name].total if name in inp.stats else 0

    focus = set(inp.focus)
    def rank(i: int) -> tuple[bool, int, bool, int]:  # focus tools' first positive and negative, then least tested
        name, n = parsed[i][0], tested(parsed[i][0])
        return (not (name in focus and n < 2), n, name not in focus, i)

    order = sorted(range(len(parsed)), key=rank)
    name, params = parsed[order[0]]
    state = inp.current_state()
    stats = inp.stats.get(name, PV.ToolStats())
    case = "positive" if stats.positive <= stats.negative else "negative"
    # chains spread their values: tester j starts j values further along (a single chain is tester 0)
    k = stats.positive + inp.chain if case == "positive" else stats.negative + 1 + inp.chain
    args = {p: _positive_value(p, t, state, hints, k) for p, t in params}
    if case == "positive":
        thought = f"{name} has {stats.total} tested call(s); try it with values taken from the current state."
        return {"thought": thought, "tool": name, "args": args, "case_type": case}
    style = (stats.negative + inp.chain) % 3
    ids = [p for p, _ in params if p.endswith("id")]
    numbers = [p for p, t in params if t in ("integer", "number")]
    strings = [p for p, t in params if t == "string"]
    if not params:
        args, what = {"unexpected": 1}, "an argument the tool does not take"
    elif style == 0 and ids:
        args[ids[0]] = f"no-such-{ids[0].replace('_', '-')}-{inp.round}"
        what = f"a nonexistent {ids[0]}"
    elif style in (0, 1) and (numbers or strings):
        if numbers:
            args[numbers[0]] = -999
            what = f"an out-of-range {numbers[0]}"
        else:
            args[strings[0]] = ""
            what = f"an empty {strings[0]}"
    else:
        pname, ptype = params[0]
        args[pname] = _WRONG_TYPE.get(ptype)
        what = f"a wrongly typed {pname}"
    thought = f"{name} has {stats.negative} negative case(s); check it rejects {what} without changing state."
    return {"thought": thought, "tool": name, "args": args, "case_type": case}


_FATAL_KINDS = ("exception", "timeout", "crash", "unserializable", "oversize")


def _state_changed(inp: PV.JudgeInput) -> bool:
    return bool(inp.call_changes)


def judge_call(inp: PV.JudgeInput) -> dict[str, Any]:
    """Rule-based and honest: only the facts in the payload decide the verdict."""
    obs, changed = inp.observation, _state_changed(inp)

    def verdict(v: str, reason: str) -> dict[str, Any]:
        facts = f"tool={inp.tool} kind={inp.tool_kind} case={inp.case_type} state_changed={changed}"
        return {"analysis": f"Facts: {facts}.", "verdict": v, "reason": reason}

    if isinstance(obs, dict) and obs.get("error_kind") in _FATAL_KINDS:
        return verdict("fail", f"the call ended in {obs['error_kind']}: {str(obs.get('error'))[:200]}; tools must "
                               "return {'success': False, 'error': ...} for bad input instead of raising")
    if isinstance(obs, dict) and obs.get("error_kind") == "schema":
        if inp.case_type == "negative":
            return verdict("pass", "ok")
        return verdict("warning", "the arguments were rejected by the tool schema before the tool ran")
    if not isinstance(obs, dict):
        return verdict("fail", f"the tool returned a non-dict value ({type(obs).__name__}: {str(obs)[:80]!r}); "
                               "it must return a dict with a 'success' key")
    if "success" not in obs:
        return verdict("fail", "the returned dict has no 'success' key")
    if obs.get("success") is False and changed:
        return verdict("fail", "the call failed (success False) but changed the state; a failed call must leave "
                               "the state unchanged (validate before mutating)")
    if inp.tool_kind == "query" and changed:
        return verdict("fail", "a query tool changed the state; queries must only read")
    if inp.case_type == "positive" and obs.get("success") is False:
        return verdict("warning", f"a positive case was refused: {str(obs.get('error'))[:160]}")
    if inp.case_type == "negative" and obs.get("success") is True:
        return verdict("warning", "a negative case was accepted; the tool lacks input validation")
    if inp.tool_kind == "state_change" and obs.get("success") is True and not changed:
        return verdict("warning", "the change reported success but the state did not change")
    return verdict("pass", "ok")


_READ_VERBS = {"get", "list", "find", "search", "check", "count", "show", "view", "lookup", "look", "is", "has",
               "can", "query", "fetch", "retrieve", "compute", "calculate", "read", "describe", "browse", "verify"}
_CHANGE_VERBS = {"add", "create", "update", "delete", "remove", "set", "cancel", "book", "lend", "return", "assign",
                 "close", "open", "move", "rename", "complete", "mark", "transfer", "pay", "freeze", "reserve",
                 "register", "schedule", "reschedule", "enroll", "restock", "fulfill", "fulfil", "release", "log",
                 "file", "attach", "withdraw", "appeal", "grant", "revoke", "pause", "resume", "extend", "loan"}
_WRITE_HINT = re.compile(r"self\.\w+(\[[^\]]*\])*\s*(\+|-)?=[^=]|\.(append|pop|remove|update|insert|clear)\(")


def tool_kinds(inp: PV.ToolKindsInput) -> dict[str, Any]:
    """Labels by purpose, as the prompt asks: the verb leading the name or the description, else the
    return convention (`"data"` for a query, `"message"` for a change), and only then the code."""
    labels = []
    for tool in inp.tools:
        first = re.split(r"[_\W]+", tool.name.lower())[0]
        described = (re.findall(r"[a-z]+", tool.description.lower()) or [""])[0]
        verbs = {first, described, described.removesuffix("s")}
        if verbs & _READ_VERBS:
            kind, reason = "query", f"{tool.name} is meant to read: its name or description leads with a read verb"
        elif verbs & _CHANGE_VERBS:
            kind, reason = "state_change", f"{tool.name} names an action on the environment"
        elif '"data"' in tool.source and '"message"' not in tool.source:
            kind, reason = "query", f"{tool.name} answers with data, the convention for a query"
        elif '"message"' in tool.source or _WRITE_HINT.search(tool.source):
            kind, reason = "state_change", f"{tool.name} reports an action or writes state"
        else:
            kind, reason = "query", f"{tool.name} neither announces nor performs a change"
        labels.append({"tool": tool.name, "kind": kind, "reason": reason})
    return {"labels": labels}
