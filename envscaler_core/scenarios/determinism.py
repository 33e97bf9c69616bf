"""A check must be a function of the state: refuse the ones whose verdict can depend on anything else.

A check verified by a few evaluations per state can still read chance, the clock or the host
(`random.random()`, `time.strftime('%s')`, `D.now()` through an alias, `os.cpu_count()`): it passes
verification by luck, before its date or on this host, then pays do-nothing episodes 1.0 at random,
once the clock has passed T, or on another machine (outside checks rt9-A F1, rt10-A F1/F4, rt10-B F5,
rt10-C F3). A denylist of spellings was walked around every time, so the rule is an allowlist:

    a check imports only modules that compute (`check_modules.PURE_MODULES`, where each is audited; from
    `time` only `strptime`, `sleep`; any other import is refused, wherever it stands: rt14-A F3), and
    names no clock (`now`/`today`/`utcnow` on anything), no reflection, I/O or address builtin, no `_`
    attribute or dunder (but `__name__`, `__module__`, ...), and no module reached through another's
    attribute (`statistics.random`), no frame/code/generator attribute (`gi_frame`, `f_builtins`), no name
    of a pure module that reads chance, the locale or the host (`NormalDist().samples`), and no field
    lookup in a format string (`'{0.sys.argv}'.format(calendar)`) (outside checks rt11 A-F1/F5, B-F2,
    C-F1). An attribute of an imported module is resolved on this interpreter (`collections.abc` is allowed,
    `calendar.sys` is not); an attribute of anything else is judged as a possible module only when the check
    uses a module as a value (rt14-A F5: a check's own `u.email`, `self.os` were refused). A usage block under `if __name__ == '__main__':` is not judged: it never
    runs (the check's `__name__` is "builtins"), unless the check could rebind it (rt11-C F5).

Judged on the code (parsed through `pyast.parse`), by name, not by dotted path: `cls = datetime.datetime;
cls.now()` still names `now`. Two guards, both kept:

* statically (`static_reason`), the rule above;
* dynamically, every check is evaluated `repeats` times on the same state, each time in its own batch
  of sandbox units (`EnvRuntime.run_checks`), evaluation k under the hash seed of repeat k % HASH_SEEDS (0,
  every episode's, then seeds the sandbox drew at random, so no check can be tuned to them: rt12-B F3), and
  results that differ are refused. With the static rule a check reaches no source of chance, so this is a
  backstop (an object's address in a repr, code the rule did not foresee; each seed is its own jail, so
  addresses differ too). A check that is a fair coin on one state escapes k evaluations of it with
  probability 2**-k (1/8 at the default 3): only the verdict verification wants (False on the initial
  state, True after the solution) passes, and a check like `credits == 4 or coin` is decided on the
  other state by its task part. The seeds catch a verdict that depends on str-hash
  order (`list({'alpha', 'beta'})[0] == 'alpha'`): every episode runs under seed 0, where it would pass
  every time, while EnvScaler's runtime draws a seed per process (outside check rt10-C, F2); the first
  evaluation, under seed 0, is the one reported.

Both give a `CheckOutcome` whose error starts with NONDETERMINISTIC, which verification
(`verify.py`) and the import's audit (`interop/classify.py`) class `nondeterministic` (not a function
of the state alone: chance, the clock or the host).
"""

from __future__ import annotations

import ast
import string
from collections.abc import Callable, Sequence
from typing import Any

from envscaler_core import pyast
from envscaler_core.runtime import CheckOutcome
from envscaler_core.scenarios.check_modules import MODULE_NAMES, OTHER_MODULES, allowed, member
from envscaler_core.scenarios.check_shapes import bound_names, class_breaches, dotted, names_as_types, uncalled_hashlib

NONDETERMINISTIC = "nondeterministic: "
CHECK_REPEATS = 3
"""Evaluations of every check per state (settings.scen.check_repeats)."""
HASH_SEEDS = 3
"""Evaluation k of a check runs as repeat k % HASH_SEEDS, under that repeat's PYTHONHASHSEED (0, then seeds
drawn at random): every repeat but 0 costs the sandbox pool one more idle jail (`SandboxPool.check_zygote`),
so more evaluations reuse these."""

_TIME_PURE = frozenset({"strptime", "struct_time", "sleep"})
"""All a check may take from `time`: the rest reads the clock (`strftime` with no time tuple reads it too);
`sleep` waits without reading anything (a slow check meets its time limit, a `check_error`)."""
_DUNDERS = frozenset({"__name__", "__module__", "__qualname__", "__doc__"})
"""The dunders a check may name: EnvScaler's checks read `__name__` (it is "builtins" there and here); the
others reach the builtins, a module or a frame (`__import__`, `__globals__`, `__subclasses__`)."""
_CLOCK = frozenset({"now", "today", "utcnow"})
_HOST = {"samples": "chance: statistics.NormalDist.samples draws from `random`, seeded by the OS",
         "kde_random": "chance: statistics.kde_random (3.13) draws from `random`",
         "LocaleTextCalendar": "the locale: calendar's Locale*Calendar set the environment's locale",
         "LocaleHTMLCalendar": "the locale: calendar's Locale*Calendar set the environment's locale",
         "different_locale": "the locale: calendar.different_locale sets a locale",
         "main": "the host: calendar.main and json.tool.main read sys.argv, files and stdin"}
"""The names, in the modules a check may import, that read chance, the locale or the host (audit of
`PURE_MODULES` on CPython 3.11-3.13), refused as an attribute or an imported name like the clock (outside
checks rt11-A F1, rt11-C F1: `statistics.NormalDist().samples(1)` was verified, a coin). The rest of those
modules reads nothing but its arguments, or what every jail pins: local time is TZ=UTC (`astimezone()`,
`fromtimestamp`), the locale is C for LC_TIME/LC_NUMERIC (`strftime('%c')`, `'{:n}'`, `time.strptime('%b')`)
unless set, and setting it takes `locale` or the names above; `decimal`'s context is the unit's own."""
_FRAMES = ("gi_", "cr_", "ag_", "f_", "tb_", "co_")
"""Attribute prefixes of generators, coroutines, async generators, frames, tracebacks and code objects:
from any of these a frame is one step away (`gi_frame`, `cr_frame`, `tb_frame`, `f_back`), and a frame holds
the globals and the builtins (`f_globals`, `f_builtins`: eval, __import__, open). Refused by prefix on
anything, so every spelling and a newer interpreter's attributes are closed too (rt11-A F5:
`(i for i in [0]).gi_frame.f_builtins['eval']` was verified); the other ways to a frame, code or globals are
dunders (`__traceback__`, `__code__`, `__globals__`) or modules (`sys`, `inspect`), refused already."""
_FORMATS = frozenset({"format", "format_map"})
"""str.format's field lookup (`'{0.sys.argv}'.format(calendar)`) is attribute access the scan cannot read
(rt11-B F2): `.format`/`.format_map` are judged on their template, a literal without `.` or `[` in a field."""
_NAMED = {"id": "id() (an object's address)", "hash": "hash() (salted per process for str)",
          "object": "object() (its repr is an address)", "open": "open() (reads the host)",
          "input": "input()", "breakpoint": "breakpoint()", "help": "help() (reads the host)",
          "license": "license() (reads the host)"}
_REFLECTION = frozenset({"getattr", "setattr", "delattr", "eval", "exec", "compile", "globals", "vars", "locals",
                         "attrgetter", "methodcaller", "Formatter", "get_type_hints", "ForwardRef", "evaluate_forward_ref",
                         "singledispatch", "singledispatchmethod", "update_wrapper", "wraps", "global_enum",
                         "get_origin", "get_args"})
"""Ways to reach a name the scan cannot read (`getattr(x, 'n' + 'ow')`, `operator.attrgetter`, the string
formatter's field lookup, `typing`'s evaluation of annotation strings, which `functools.singledispatch`'s
`register` runs with the real builtins: rt12-A F2; `functools.update_wrapper`/`wraps`, which read every
attribute `assigned=`/`updated=` name, a generator's frame then the builtins: rt14-A F1; `enum.global_enum`,
which writes into the globals of the module a class names; `typing.get_origin`/`get_args`, which hand out
what a type was built on: `get_origin(typing.Type)` is `type` itself (rt19-R3 F1); the audit of every allowed module is in
`check_modules.py`). `compile` is the builtin only as a bare name: `re.compile`
and `from re import compile` are fine (rt12-A F3)."""


def static_reason(source: Any) -> str | None:
    """What in `source` lets its verdict depend on something other than the state, or None. Code that
    does not parse is not judged here: running it says why it fails."""
    if not isinstance(source, str):
        return None
    try:
        tree = pyast.parse(source)
    except (SyntaxError, ValueError):
        return None
    tree = _without_main_block(tree)
    time_names = {a.asname or a.name for node in ast.walk(tree) if isinstance(node, ast.Import)
                  for a in node.names if a.name == "time"}
    bound = bound_names(tree)
    re_compile = {a.asname or a.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
                  and node.module == "re" and not node.level for a in node.names if a.name == "compile"}
    modules = _module_names(tree)
    escaped = _escaped(tree, modules)
    found: list[str] = []
    judged: set[int] = names_as_types(tree)  # names already judged (with their attribute or subscript)
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in time_names:
            judged.add(id(node.value))
            if node.attr not in _TIME_PURE:
                found.append(f"{node.value.id}.{node.attr} (from time only {'/'.join(sorted(_TIME_PURE))})")
        elif isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == "__builtins__":
            judged.add(id(node.value))
        elif isinstance(node, ast.Name) and (id(node) in judged or node.id in re_compile):
            continue
        elif isinstance(node, ast.Name) and node.id in time_names:
            found.append(f"{node.id} (the time module as a value)")
        elif isinstance(node, ast.Name) and node.id in _NAMED and isinstance(node.ctx, ast.Load) and node.id not in bound:
            found.append(_NAMED[node.id])  # called or passed on (`sorted(xs, key=id)`)
        found.extend(_named(node, modules, escaped))
    found += class_breaches(tree) + uncalled_hashlib(tree, modules)
    return _reason(list(dict.fromkeys(found))) if found else None


REASON_CHARS = 200
"""A refusal fits the 200 characters the import's audit shows of a reason (`interop.classify.short`)."""
_RULE = " (the rule: docs/scenarios_and_rollouts.md step 3)"


def _reason(found: list[str]) -> str:
    """The first breach, whole or cut to fit, then how many more and where the rule is: the full module list
    cut the reason mid-list and named nothing a repair could act on (outside check rt14-C F2)."""
    more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
    head = f"{NONDETERMINISTIC}the check names "
    room = REASON_CHARS - len(head) - len(more) - len(_RULE)
    first = found[0] if len(found[0]) <= room else found[0][:room - 3] + "..."
    return f"{head}{first}{more}{_RULE}"


def _named(node: ast.AST, modules: dict[str, str], escaped: bool) -> list[str]:
    if isinstance(node, ast.Import):
        return [f"import {a.name} (not a module a check may import)" for a in node.names
                if not allowed(a.name) and a.name.split(".")[0] != "time"]
    if isinstance(node, ast.ImportFrom):
        module = node.module or ""
        if module == "__future__" and not node.level:  # compiler directives (`annotations`): nothing to run
            return []
        if node.level or not (allowed(module) or module == "time"):
            return [f"from {'.' * node.level}{module} import (not a module a check may import)"]
        if module == "time":
            return [f"time.{a.name}" for a in node.names if a.name not in _TIME_PURE]
        if any(a.name == "*" for a in node.names):
            return [f"from {module} import * (name what the check imports)"]
        return [f for a in node.names for f in _name(a.name, f"{module}.{a.name}", owner=module)]
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == "__builtins__":
        key = node.slice.value if isinstance(node.slice, ast.Constant) else None
        if not isinstance(key, str):
            return ["__builtins__[...] (a computed builtin)"]
        return _name(key, f"__builtins__[{key!r}]", attribute=False) + ([_NAMED[key]] if key in _NAMED else [])
    if isinstance(node, ast.Name):
        return _name(node.id, node.id, attribute=False)
    if isinstance(node, ast.MatchClass):  # `case G(gi_frame=f)` reads the attribute `gi_frame` (rt12-A F1)
        return [f for attr in node.kwd_attrs for f in _name(attr, f"{dotted(node.cls) or '...'}({attr}=...)")]
    if isinstance(node, ast.Attribute) and node.attr in _FORMATS:
        return _format_template(node)
    if isinstance(node, ast.Attribute):
        return _name(node.attr, f"{dotted(node.value) or '...'}.{node.attr}", owner=_module_of(node.value, modules),
                     escaped=escaped)
    return []


def _format_template(node: ast.Attribute) -> list[str]:
    """`.format`/`.format_map` on a literal template whose fields name no attribute or index (`"{}"`,
    `"{0}"`, `"{name:>8}"` are fine; f-strings are plain code, judged as such)."""
    shown = f"{dotted(node.value) or '...'}.{node.attr}"
    if not (isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)):
        return [f"{shown} (str.format on a template that is not a literal)"]
    fields = _lookup_fields(node.value.value)
    return [f"{{{field}}} in {node.value.value!r}.{node.attr} (str.format's attribute or index lookup)" for field in fields]


def _lookup_fields(template: str) -> list[str]:
    """The fields of a format template that look up an attribute or an index, nested specs included; a
    template that does not parse fails when run."""
    try:
        parts = list(string.Formatter().parse(template))
    except ValueError:
        return []
    found = [field for _, field, _, _ in parts if field and ("." in field or "[" in field)]
    return found + [f for _, _, spec, _ in parts if spec for f in _lookup_fields(spec)]


def _is_main_guard(stmt: ast.stmt) -> bool:
    """`if __name__ == '__main__':`, either way round (rt12-C F7: `'__main__' == __name__` was judged)."""
    test = stmt.test if isinstance(stmt, ast.If) else None
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)):
        return False
    sides = {type(side).__name__: side for side in (test.left, test.comparators[0])}
    name, constant = sides.get("Name"), sides.get("Constant")
    return (isinstance(name, ast.Name) and name.id == "__name__" and isinstance(constant, ast.Constant)
            and constant.value == "__main__")


def _without_main_block(tree: ast.Module) -> ast.Module:
    """The module without the body of a module-level `if __name__ == '__main__':` (its `else` stays): the
    check's globals have no `__name__`, so it reads the builtins' own, "builtins", here as in EnvScaler's
    runtime, and that usage block never runs (rt11-C F5). Judged in full when the check could make it run:
    it binds `__name__` anywhere or names `__builtins__` (whose `__name__` it would otherwise read)."""
    if not any(_is_main_guard(stmt) for stmt in tree.body) or "__name__" in bound_names(tree) or any(
            isinstance(node, ast.Name) and node.id == "__builtins__" for node in ast.walk(tree)):
        return tree
    body = [kept for stmt in tree.body for kept in (stmt.orelse if _is_main_guard(stmt) else [stmt])]
    return ast.Module(body=body, type_ignores=tree.type_ignores)


def _name(name: str, shown: str, attribute: bool = True, owner: str | None = None, escaped: bool = True) -> list[str]:
    """Why a name is refused: an attribute or an imported name by all of the rule; a bare variable only
    for reflection and dunders (`now = ...` or `_seen` as a local is fine; the builtins in `_NAMED` are
    judged at their call, so `id` as a variable is fine too). `owner`: the module the name is taken from,
    when known (`uuid.uuid4`, `from collections import abc`); `escaped`: a module is used as a value in the
    check, so any attribute may be taken from one."""
    if attribute and name in _CLOCK:
        return [f"{shown} (the clock)"]
    if attribute and name in _HOST:
        return [f"{shown} ({_HOST[name]})"]
    if attribute and name.startswith(_FRAMES):
        return [f"{shown} (a frame, code object or generator: reaches the globals and builtins)"]
    if name in _REFLECTION and not (attribute and name == "compile"):
        return [f"{shown} (reflection)"]
    if (name.startswith("__") and name not in _DUNDERS) or (attribute and name.startswith("_") and name not in _DUNDERS):
        return [f"{shown} (a private or dunder name)"]
    if attribute and owner is not None:
        return _module_member(owner, name, shown)
    if attribute and escaped and name in OTHER_MODULES:
        return [f"{shown} (may be a module: the check uses one as a value; write module.name only, or a subscript)"]
    owners = [owner for owner, names in MODULE_NAMES.items() if name in names]
    if attribute and escaped and owners:
        return [f"{shown} (refused in {owners[0]}, and the check uses a module as a value)"]
    return []


def _module_member(owner: str, name: str, shown: str) -> list[str]:
    """`owner.name` where `owner` is a module the check imported: refused when it is a module a check may not
    import, a name of `owner` that reads chance or the host, or absent here but named like a module."""
    kind, module = member(owner, name)
    if kind == "module" and module is not None and not allowed(module):
        return [f"{shown} (another module: {module})"]
    if name in MODULE_NAMES.get(owner, {}):
        return [f"{shown} ({MODULE_NAMES[owner][name]})"]
    if kind == "unknown" and name in OTHER_MODULES:
        return [f"{shown} (another module on some interpreter)"]
    return []


def _module_names(tree: ast.AST) -> dict[str, str]:
    """The names the check binds to an allowed module by import (`import collections.abc` binds
    `collections`; `from collections import abc` binds `abc` to collections.abc)."""
    names: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if allowed(a.name):
                    names[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and not node.level and allowed(node.module or ""):
            for a in node.names:
                kind, module = member(node.module or "", a.name)
                if kind == "module" and module is not None:
                    names[a.asname or a.name] = module
    return names


def _module_of(node: ast.AST, modules: dict[str, str]) -> str | None:
    """The module `node` names for sure (`collections`, `collections.abc`, `json.decoder`), or None."""
    if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
        return modules.get(node.id)
    if isinstance(node, ast.Attribute):
        owner = _module_of(node.value, modules)
        kind, module = member(owner, node.attr) if owner is not None else ("value", None)
        return module if kind == "module" else None
    return None


def _escaped(tree: ast.AST, modules: dict[str, str]) -> bool:
    """Does a module object reach a value (`m = calendar`, `f(calendar)`, `[calendar][0]`)? Otherwise a module
    is only ever the base of an attribute chain the rule resolves, and an attribute of anything else (a check's
    own `u.email`, `self.os`, `r.types`) cannot be a module: no class or function of an allowed module holds one
    but by a dunder (`__globals__`), refused (outside check rt14-A F5: those fields were refused as modules)."""
    if not modules:
        return False
    if any(isinstance(node, ast.Import | ast.ImportFrom) for cls in ast.walk(tree) if isinstance(cls, ast.ClassDef)
           for node in ast.walk(cls)):
        return True  # an import in a class binds the module as the class's attribute (`C.calendar.sys`)
    bases = {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
    return any(id(node) not in bases and _module_of(node, modules) is not None
               for node in ast.walk(tree) if isinstance(node, ast.Name | ast.Attribute))


Runner = Callable[[list[Any], int], list[CheckOutcome]]
"""`run(sources, repeat)`: one batch of fresh sandbox units, under the hash seed of that repeat (`EnvRuntime.run_checks`)."""


def repeated(sources: Sequence[Any], run: Runner, repeats: int, static: Sequence[Any] | None = None) -> list[CheckOutcome]:
    """One outcome per source: `run` evaluates the sources `repeats` times, evaluation k as repeat
    k % HASH_SEEDS (its own hash seed);
    a source `static_reason` refuses is not run at all (`static`: the code to judge statically when
    `sources` are wrapped, e.g. the import's marker helper), and one whose evaluations disagree
    (True/False/no bool) gets a NONDETERMINISTIC error naming them; otherwise the first (seed 0, every
    episode's)."""
    judged = list(static) if static is not None else list(sources)
    refused = [static_reason(src) for src in judged]
    todo = [i for i, why in enumerate(refused) if why is None]
    runs = [run([sources[i] for i in todo], k % HASH_SEEDS) for k in range(max(1, repeats))] if todo else []
    out: list[CheckOutcome] = [CheckOutcome(passed=None, error=why) for why in refused]
    for k, i in enumerate(todo):
        seen = [r[k] for r in runs]
        verdicts = [o.passed for o in seen]
        if len(set(verdicts)) > 1:
            shown = ", ".join("no bool" if v is None else str(v) for v in verdicts)
            out[i] = CheckOutcome(passed=None, error=(f"{NONDETERMINISTIC}gave {shown} on {len(seen)} evaluations of the "
                                                      f"same state (under hash seed 0 and {min(len(seen), HASH_SEEDS) - 1} drawn at random): its "
                                                      "verdict must be a function of the state"))
        else:
            out[i] = seen[0]
    return out


def is_nondeterministic(error: str | None) -> bool:
    return (error or "").startswith(NONDETERMINISTIC)


def without_prefix(error: str | None) -> str:
    """The reason of a NONDETERMINISTIC error, without its prefix."""
    return (error or "").removeprefix(NONDETERMINISTIC)
