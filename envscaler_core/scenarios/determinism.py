"""A check must be a function of the state: refuse the ones whose verdict depends on chance or the clock.

A check verified by one evaluation per state can still read `random.random()` or `time.time()`: it
passes verification by luck (or before its date), then pays do-nothing episodes 1.0 at random or once
the clock has passed T (outside check rt9-A, F1). Two guards, both needed:

* statically, the check's code (parsed through `pyast.parse`) names a source of randomness or the
  clock: the modules `random`, `secrets`, `uuid`, the clock functions of `time`, `datetime.now/today/
  utcnow` (and `date.today`), `os.urandom/getrandom`, the builtins `id()` (an address) and `hash()` (a
  str's hash is salted per process unless PYTHONHASHSEED is fixed, which no trainer promises);
* dynamically, every check is evaluated `repeats` times on the same state, each time in its own batch
  of sandbox units (`EnvRuntime.run_checks`), and results that differ are refused: this catches what a
  name does not show (`__import__('ran' + 'dom')`). A coin evaluated k times on
  each of two states escapes with probability 4**-k (1/64 at the default 3).

Both give a `CheckOutcome` whose error starts with NONDETERMINISTIC, which verification
(`verify.py`) and the import's audit (`interop/classify.py`) class `nondeterministic`.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Sequence
from typing import Any

from envscaler_core import pyast
from envscaler_core.runtime import CheckOutcome

NONDETERMINISTIC = "nondeterministic: "
CHECK_REPEATS = 3
"""Evaluations of every check per state (settings.scen.check_repeats)."""

_RANDOM_MODULES = frozenset({"random", "secrets", "uuid"})
_CLOCK = {"time": frozenset({"time", "time_ns", "monotonic", "monotonic_ns", "perf_counter", "perf_counter_ns",
                             "process_time", "process_time_ns", "thread_time", "thread_time_ns", "localtime",
                             "gmtime", "ctime", "asctime", "clock_gettime", "clock_gettime_ns"}),
          "os": frozenset({"urandom", "getrandom"})}
_NOW = frozenset({"now", "today", "utcnow"})
_BUILTINS = {"id": "id() (an object's address)", "hash": "hash() (salted per process for str)"}


def static_reason(source: Any) -> str | None:
    """What in `source` makes its verdict depend on chance or the clock, or None. Code that does not
    parse is not judged here: running it says why it fails."""
    if not isinstance(source, str):
        return None
    try:
        tree = pyast.parse(source)
    except (SyntaxError, ValueError):
        return None
    found: list[str] = []
    for node in ast.walk(tree):
        found.extend(_named(node))
    if not found:
        return None
    return f"{NONDETERMINISTIC}the check names {', '.join(dict.fromkeys(found))}: its verdict must be a function of the state"


def _named(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Import):
        return [a.name for a in node.names if a.name.split(".")[0] in _RANDOM_MODULES]
    if isinstance(node, ast.ImportFrom):
        top = (node.module or "").split(".")[0]
        if top in _RANDOM_MODULES:
            return [node.module or top]
        clock = _CLOCK.get(top, frozenset())
        return [f"{top}.{a.name}" for a in node.names if a.name in clock]
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        if node.attr in _CLOCK.get(node.value.id, frozenset()):
            return [f"{node.value.id}.{node.attr}"]
    if isinstance(node, ast.Attribute) and node.attr in _NOW and _dotted(node.value).split(".")[-1] in ("datetime", "date"):
        return [f"{_dotted(node.value)}.{node.attr}"]
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _BUILTINS:
        return [_BUILTINS[node.func.id]]
    if isinstance(node, ast.Call) and _dotted(node.func).split(".")[-1] in ("__import__", "import_module"):
        first = node.args[0] if node.args else None
        if isinstance(first, ast.Constant) and isinstance(first.value, str) and first.value.split(".")[0] in _RANDOM_MODULES:
            return [first.value]
    return []


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return ""


Runner = Callable[[list[Any]], list[CheckOutcome]]


def repeated(sources: Sequence[Any], run: Runner, repeats: int, static: Sequence[Any] | None = None) -> list[CheckOutcome]:
    """One outcome per source: `run` (one call = one batch of fresh sandbox units) evaluates the sources
    `repeats` times; a source `static_reason` refuses is not run at all (`static`: the code to judge
    statically when `sources` are wrapped, e.g. the import's marker helper), and one whose evaluations
    disagree (True/False/no bool) gets a NONDETERMINISTIC error naming them; otherwise the first."""
    judged = list(static) if static is not None else list(sources)
    refused = [static_reason(src) for src in judged]
    todo = [i for i, why in enumerate(refused) if why is None]
    runs = [run([sources[i] for i in todo]) for _ in range(max(1, repeats))] if todo else []
    out: list[CheckOutcome] = [CheckOutcome(passed=None, error=why) for why in refused]
    for k, i in enumerate(todo):
        seen = [r[k] for r in runs]
        verdicts = [o.passed for o in seen]
        if len(set(verdicts)) > 1:
            shown = ", ".join("no bool" if v is None else str(v) for v in verdicts)
            out[i] = CheckOutcome(passed=None, error=(f"{NONDETERMINISTIC}gave {shown} on {len(seen)} evaluations of the "
                                                      "same state: its verdict must be a function of the state"))
        else:
            out[i] = seen[0]
    return out


def is_nondeterministic(error: str | None) -> bool:
    return (error or "").startswith(NONDETERMINISTIC)


def without_prefix(error: str | None) -> str:
    """The reason of a NONDETERMINISTIC error, without its prefix."""
    return (error or "").removeprefix(NONDETERMINISTIC)
