"""What one tool call does to an episode under the env's rules (`AcceptedEnv.episode_rules`).

Both rule sets end the episode with reward 0 when the tool's method raises, or the env's process dies or
times out in the call: EnvScaler's `step` catches the exception, ends the episode and never computes a
reward, and a traceback answered as an observation made episodes that go on to earn 1.0 (and become SFT
data) out of an env that broke (differential check F1).

An env imported from EnvScaler's files plays its runtime's rules exactly (F2): `getattr(env, name)(**args)`
inside that same `try`, so a call it runs into a TypeError (a missing or an extra argument, a name that is a
data attribute, a class constant or a property, listed as a tool or not) ends the episode at 0 as well; a
name the instance does not have, or arguments that are not an object, are its "Error: Invalid action" and
the episode goes on. Its arguments are
read as its `parse_action` reads them (`envscaler_arguments`: `json.loads`, nothing repaired; differential
round 3, F2/F3), while a synthesized env reads them leniently (docs/llm.md). Those calls are
decided here from the method's own signature (read from the class's code; a decorated method's from its
tool schema) and the class, before the sandbox is asked, because the sandbox refuses all of them alike. A synthesized env keeps the factory's
contract: a refused call is an observation and the episode goes on. Ill-typed arguments and `_private`
names are refused under both (docs/interop.md, differences table).
"""

from __future__ import annotations

import ast
import functools
import json
import re
from typing import Any

from pydantic import BaseModel, Field

from envscaler_core import pyast
from envscaler_core.llm.replies import ReplyProblem, checked_arguments, parse_arguments, sent_arguments
from envscaler_core.llm.replies.structured import shown
from envscaler_core.models.env import AcceptedEnv, EpisodeRules
from envscaler_core.runtime import CallOutcome, Episode, EpisodeBreach
from envscaler_core.signature import parameters
from envscaler_core.synth.tool_schema import is_property

RAISED_KINDS = frozenset({"exception", "timeout", "crash"})
"""Error kinds where the env's own code failed in the call (`runtime.ErrorKind`), not a refusal."""

ENDED = "the episode ended here with reward 0"
PARSE_FAILED = "Error: Failed to parse response to action"
"""EnvScaler's observation for an assistant reply with neither tool calls nor content (`parse_action`, Case 4),
and for a call whose arguments text `json.loads` cannot read."""
INVALID_ACTION = "Error: Invalid action"
"""EnvScaler's observation for a call `check_vaild_action` refuses: arguments that read as no object."""


NO_ARGUMENTS: Any = object()
"""A tool_call's `function` with no `arguments` key (`function.get("arguments", NO_ARGUMENTS)`): EnvScaler's
`parse_action` reads `action['arguments']`, a KeyError, so its words are `PARSE_FAILED`, not the
"Error: Invalid action" that `"arguments": null` gets (outside check rt22-R13, F3)."""

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def observed_json(value: Any) -> str:
    """`value` as the JSON text an agent observes: its characters as they are (`Dune ☄`, `李雷`), as EnvScaler's
    `str()` of a result and serve-mcp show them; the gym escaped each non-ASCII character (`\\u2604`, six
    characters per CJK character; outside check rt22-R13, F2). JSON's own escapes stay (C0 controls such as a
    newline are `\\n`, `\\u001b`), and a lone surrogate, which no UTF-8 writer takes, stays its `\\udXXX`
    escape, so the text is one JSON value every store and export can write. The one renderer of tool messages
    (the gym's observations, rollouts' stored tool messages and so the SFT rows made of them)."""
    text = json.dumps(value, ensure_ascii=False, default=str)
    return _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


class Unread(ReplyProblem):
    """Arguments EnvScaler's runtime does not run a call with; the text is EnvScaler's words and why."""


def envscaler_arguments(raw: Any) -> dict[str, Any]:
    """A call's arguments exactly as EnvScaler's runtime reads them: text through `json.loads` (so a key
    named twice keeps its last value and `NaN` is a float; a trailing comma, single quotes, a fence, prose
    or `""` fail), anything else as it is; what is not an object is its "Error: Invalid action". Nothing is
    repaired: its runtime never runs such a call, and a repaired one paid 1.0 here where it pays 0.0
    (differential round 3, F3). ReplyProblem carries EnvScaler's words; the episode goes on. The object
    then reaches the sandbox as one JSON object (a repeated key is gone by then)."""
    if raw is NO_ARGUMENTS:
        raise Unread(f"{PARSE_FAILED}: the call has no 'arguments' key (its parse_action raises KeyError), so "
                     "EnvScaler's runtime does not run the call")
    value = raw
    if isinstance(raw, str):
        try:
            value = json.loads(raw)
        except (ValueError, RecursionError) as exc:  # its parse_action catches every Exception
            raise Unread(f"{PARSE_FAILED}: json.loads cannot read the arguments ({str(exc)[:120]}), so "
                               "EnvScaler's runtime does not run the call") from None
    if not isinstance(value, dict):
        raise Unread(f"{INVALID_ACTION}: the arguments are {'null' if value is None else shown(value)}, not "
                           "an object, so EnvScaler's "
                           "runtime does not run the call")
    return checked_arguments(value)


def lenient_arguments(raw: Any) -> dict[str, Any]:
    """A call's arguments as the factory reads them (`parse_arguments`, docs/llm.md); no key reads as null."""
    return parse_arguments(None if raw is NO_ARGUMENTS else raw)


def with_sent_arguments(msg: dict[str, Any], sent: dict[str, Any]) -> dict[str, Any]:
    """The normalised turn `msg` with each call's arguments text as `sent` (the agent's own turn) had it:
    what an imported env reads and its trajectory keeps. Calls read from text, or a turn whose calls do not
    pair up one to one, keep the normalised form."""
    raw = sent_arguments(sent)
    calls = msg.get("tool_calls") or []
    if raw is None or len(raw) != len(calls):
        return msg
    return {**msg, "tool_calls": [{**c, "function": {**c["function"], "arguments": a}} if isinstance(a, str) else c
                                  for c, a in zip(calls, raw, strict=True)]}


class Observed(BaseModel):
    """One call's tool message (`content`, JSON text), whether it is an error, and `ends`: why the episode
    ends at this call with reward 0 (None: it goes on)."""

    content: str
    is_error: bool
    ends: str | None = None
    state: dict[str, Any] | None = Field(default=None, description=(
        "The state after the call when the call changed it (its `state_diff` is not empty): collateral "
        "changes count every path any call changed (`scenarios/footprint.ChangeLog`)."))


def raised_text(outcome: CallOutcome) -> str:
    """A short account of a failed call: the exception's last line (its type and message), never the
    traceback (whose frames and the sandbox's own messages are no business of the agent's or SFT data)."""
    if outcome.error_kind == "exception":
        lines = [ln.strip() for ln in (outcome.error or "").splitlines() if ln.strip()]
        last = lines[-1] if lines else "an exception"
        return f"{outcome.tool} raised {last[:200]}"
    if outcome.error_kind == "timeout":
        return f"{outcome.tool} did not finish within the sandbox's time limit"
    return f"the env's process died during {outcome.tool}"


@functools.lru_cache(maxsize=256)
def class_attribute_kinds(code: str, class_name: str) -> dict[str, str]:
    """Names the class (and the classes of the same code it derives from) binds in its body to something
    that is not a plain method, each with what it is ("a class attribute": constants, mutable defaults;
    "a property": `@property`, `@cached_property`). `getattr` finds them on every instance, and calling one
    is a TypeError in EnvScaler's runtime (a property's value is what is called). Do not mutate the result."""
    try:
        tree = pyast.parse(code)  # the one AST lock; trees shared with validation
    except SyntaxError:  # SourceTooLarge and NestedTooDeep are SyntaxErrors too
        return {}
    classes = {n.name: n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)}
    plain = _PLAIN_RESULTS - _bound_anywhere(tree)  # `from functools import partialmethod as len` (rt13 F1)
    kinds: dict[str, str] = {}
    seen: set[str] = set()
    todo = [class_name]
    while todo:
        node = classes.get(todo.pop())
        if node is None or node.name in seen:
            continue
        seen.add(node.name)
        todo += [b.id for b in node.bases if isinstance(b, ast.Name)]
        for stmt in node.body:
            if isinstance(stmt, ast.Assign):
                kind = CALLABLE if _callable_value(stmt.value, plain) else "a class attribute"
                kinds.update((t.id, kind) for t in stmt.targets if isinstance(t, ast.Name))
            elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value is not None:
                kinds[stmt.target.id] = CALLABLE if _callable_value(stmt.value, plain) else "a class attribute"
            elif isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef) and is_property(stmt):
                kinds.setdefault(stmt.name, CALLABLE_PROPERTY if _returns_callable(stmt, plain) else "a property")
    return {n: k for n, k in kinds.items() if not n.startswith("_")}


CALLABLE = "a callable class attribute"
"""`lend = lend_book`, `ping = lambda self: ...`: EnvScaler's runtime calls it as it calls a method."""
CALLABLE_PROPERTY = "a property whose value is callable"
"""A getter that returns a lambda, a nested def or a bound method: EnvScaler's runtime runs the getter and
calls what it returns; validation probes it (a getter that writes state is a defect like any other)."""


_PLAIN_RESULTS = frozenset({"len", "str", "int", "float", "bool", "sum", "round", "abs", "repr", "sorted", "list",
                            "dict", "tuple", "set", "frozenset", "any", "all", "format", "bytes"})
"""Builtins whose result is never callable, whatever they are given."""


def _bound_anywhere(tree: ast.AST) -> set[str]:
    """Every name the code binds anywhere (assigned, imported, defined, a parameter)."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            names.add(node.id)
        elif isinstance(node, ast.alias):
            names.add(node.asname or node.name.split(".")[0])
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
    return names


def _plainly_not_callable(value: ast.expr | None, plain: frozenset[str] = _PLAIN_RESULTS) -> bool:
    """A value the source shows is not callable: a literal, a display, a comprehension, an f-string, `not x`,
    or a builtin of `plain` called (`len(self.loans)`; not one the module rebinds). A comparison may be
    callable (`__eq__` returns anything: rt13 F1). Anything else may be callable:
    `functools.partial(...)`, `self.books.clear`, `partialmethod(...)`, an attribute (rt12-B F1: those were
    taken for data, never probed, and one that lent a book paid 1.0 in the gym)."""
    if value is None or isinstance(value, ast.Constant | ast.JoinedStr | ast.List | ast.Tuple | ast.Set | ast.Dict
                                        | ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp):
        return True
    if isinstance(value, ast.UnaryOp):
        return isinstance(value.op, ast.Not) or _plainly_not_callable(value.operand, plain)
    if isinstance(value, ast.BinOp):
        return _plainly_not_callable(value.left, plain) and _plainly_not_callable(value.right, plain)
    return isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in plain


def _callable_value(value: ast.expr, plain: frozenset[str]) -> bool:
    """A class-level value that may be callable: all but a plainly non-callable one (`MAX_LOANS = 3`)."""
    return not _plainly_not_callable(value, plain)


def _returns_callable(getter: ast.FunctionDef | ast.AsyncFunctionDef, plain: frozenset[str]) -> bool:
    """A getter whose value may be callable: any `return` that is not plainly non-callable (no `return` at
    all gives None). The sandbox reads the value and calls it, or answers that it is not callable."""
    returns = [n.value for n in ast.walk(getter) if isinstance(n, ast.Return)]
    return not all(_plainly_not_callable(r, plain) for r in returns)


def no_method_tools(code: str, class_name: str, tools: list[str]) -> dict[str, str]:
    """The tools (by name, in order) that are no method of the class but a class attribute or a property whose
    value is not callable as far as the source shows, each with which: EnvScaler's step6 lists every definition
    (`@property def loan_count` too) and its runtime offers them, but `getattr(env, name)(**args)` calls the
    value and raises TypeError. A callable one (an alias `lend = lend_book`, a lambda, a getter returning a
    lambda) is called there and here (outside check 11, B-F3), so it is no such tool. A name the class also
    defines as a plain method is a method (the later definition wins in Python; here, any)."""
    kinds, methods = class_attribute_kinds(code, class_name), method_signatures(code, class_name)
    return {t: kinds[t] for t in tools if t in kinds and t not in methods and kinds[t] not in (CALLABLE, CALLABLE_PROPERTY)}


class Takes(BaseModel):
    """What a call by name can give a method: its parameters (`self` and positional-only ones left out),
    those without a default, and whether `**kwargs` takes any other name."""

    names: tuple[str, ...]
    required: tuple[str, ...]
    any_name: bool


@functools.lru_cache(maxsize=256)
def method_signatures(code: str, class_name: str) -> dict[str, Takes]:
    """Each plain method of the class (and of the classes of the same code it derives from, the class's own
    first) as its signature says a call by keywords must give it: EnvScaler's runtime runs the method, not
    the schema, so a property the method does not take is no missing argument (F4). A decorated method
    (other than staticmethod/classmethod) is left out, its wrapper may take anything: its schema judges."""
    try:
        tree = pyast.parse(code)  # the one AST lock; trees shared with validation
    except SyntaxError:  # SourceTooLarge and NestedTooDeep are SyntaxErrors too
        return {}
    classes = {n.name: n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)}
    found: dict[str, Takes] = {}
    wrapped: set[str] = set()
    seen: set[str] = set()
    todo = [class_name]
    while todo:
        node = classes.get(todo.pop(0))
        if node is None or node.name in seen:
            continue
        seen.add(node.name)
        todo += [b.id for b in node.bases if isinstance(b, ast.Name)]
        for stmt in node.body:
            if not isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef) or stmt.name in {*found, *wrapped}:
                continue
            decorators = {d.id for d in stmt.decorator_list if isinstance(d, ast.Name)}
            if len(decorators) != len(stmt.decorator_list) or decorators - {"staticmethod", "classmethod"}:
                wrapped.add(stmt.name)  # the tool's schema judges it
                continue
            signature = parameters(stmt, bound="staticmethod" not in decorators)
            required = tuple(n for n in signature.required if n not in signature.positional_only)
            found[stmt.name] = Takes(names=signature.by_name, required=required, any_name=signature.kwarg is not None)
    return found


class CallRules:
    """One env's rules for running calls; build once per episode (`for_env`)."""

    def __init__(self, env: AcceptedEnv) -> None:
        self.rules: EpisodeRules = env.episode_rules
        self.tools = {t.function.name: t.function.parameters for t in env.tools}
        self.signatures = method_signatures(env.class_code, env.class_name) if self.rules == "envscaler" else {}
        self.constants = (no_method_tools(env.class_code, env.class_name, list(class_attribute_kinds(
            env.class_code, env.class_name))) if self.rules == "envscaler" else {})

    @property
    def first_call_only(self) -> bool:
        """EnvScaler's `parse_action` takes `tool_calls[0]` of a message; the factory runs every call."""
        return self.rules == "envscaler"

    @property
    def empty_reply_goes_on(self) -> bool:
        """EnvScaler's `parse_action` fails on a reply with no calls and empty or null content, and its `step`
        answers `PARSE_FAILED` and goes on; the factory takes any reply without calls as the agent's last."""
        return self.rules == "envscaler"

    def read_arguments(self, raw: Any) -> dict[str, Any]:
        """A call's arguments under these rules (`envscaler_arguments`, or the factory's lenient reading)."""
        return envscaler_arguments(raw) if self.rules == "envscaler" else lenient_arguments(raw)

    def run(self, ep: Episode, call: dict[str, Any]) -> Observed:
        """Run one OpenAI tool_call (not `chat_with_user`: `chat_call` takes that) under these rules."""
        fn = call.get("function") or {}
        name = fn.get("name") or ""
        try:
            args = self.read_arguments(fn.get("arguments", NO_ARGUMENTS))
        except ReplyProblem as exc:  # EnvScaler: a parse failure, the episode goes on
            return Observed(content=observed_json({"error": str(exc), "error_kind": "schema"}), is_error=True)
        if self.rules == "envscaler":
            why = self.type_error(ep, str(name), args)
            if why is not None:
                return _ending(why, "schema")
        out = ep.call(name, args)
        state = out.state if out.state_diff else None
        if out.ok:
            return Observed(content=observed_json(out.result), is_error=False, state=state)
        if out.error_kind in RAISED_KINDS:
            return _ending(raised_text(out), str(out.error_kind)).model_copy(update={"state": state})
        return Observed(content=observed_json({"error": out.error, "error_kind": out.error_kind}), is_error=True,
                        state=state)

    def type_error(self, ep: Episode, name: str, args: dict[str, Any]) -> str | None:
        """Why EnvScaler's runtime would run `name(**args)` into a TypeError, or None."""
        if name.startswith("_"):
            return None  # refused as private here (documented), whatever EnvScaler does
        params = self.tools.get(name)
        in_state = name in _state_keys(ep)
        if in_state or name in self.constants:
            # an instance attribute wins over the method of that name (EnvScaler's loader sets every config key,
            # `renew: 7` included): its getattr finds the data, not the tool (differential round 3, F4). A class
            # constant or property the source shows is data (`no_method_tools`), listed as a tool or not, is
            # never run either: validation does not probe it, so running it could pay what no check judged
            # (rt14-A F2: `get_summary = 0` rebound after the class to a partialmethod that lends; rt14-B F1:
            # `str(x)` whose `__str__` returns a callable str subclass). EnvScaler's runtime calls the value and
            # raises TypeError when it is data, as here; one made callable behind the source's back runs there
            # (docs/interop.md Known limits). A value that may be callable (an alias, a lambda, a getter
            # returning one) is left to the call and probed like a method (outside check 11, B-F3).
            what = "a property" if not in_state and self.constants.get(name) == "a property" else "a data attribute"
            return (f"{name!r} is {what} of the env, not a method: EnvScaler's runtime calls its value and "
                    "raises TypeError (not callable)")
        if params is None:
            return None  # no such attribute: EnvScaler's "Invalid action", the episode goes on
        takes = self.signatures.get(name)
        if takes is not None:  # the method's own signature decides, as it does in EnvScaler's runtime
            missing = [r for r in takes.required if r not in args]
            extra = [] if takes.any_name else [a for a in args if a not in takes.names]
        else:
            props = params.get("properties") if isinstance(params.get("properties"), dict) else {}
            required = params.get("required") if isinstance(params.get("required"), list) else []
            missing = [r for r in required if isinstance(r, str) and r not in args]
            extra = [] if params.get("additionalProperties") is True else [a for a in args if a not in props]
        if missing:
            return (f"{name} is missing required argument(s) {', '.join(map(repr, missing))}: EnvScaler's runtime "
                    "raises TypeError on this call")
        if extra:
            return (f"{name} got unexpected argument(s) {', '.join(repr(a)[:40] for a in extra[:4])}: EnvScaler's "
                    "runtime raises TypeError on this call")
        return None


def _state_keys(ep: Episode) -> set[str]:
    try:
        return set(ep.state)
    except EpisodeBreach:  # its state may be forged: the call itself meets the breach
        return set()


def _ending(why: str, kind: str) -> Observed:
    return Observed(content=observed_json({"error": f"{why}; {ENDED}", "error_kind": kind}), is_error=True, ends=why)
