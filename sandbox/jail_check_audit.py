"""Defence in depth for check functions: an audit hook (`sys.addaudithook`) that, while a check's own code
runs, refuses the audit events a pure check never needs, whatever the static purity rule missed.

A check computes a verdict from two states. It never reads a restricted attribute (`object.__getattr__`:
`gi_frame`, `tb_frame`, `__code__`, ... lead to a frame's builtins), opens a file, imports a module from disk,
compiles or runs code, or touches the host (`os.*`, `subprocess.*`, `socket.*`, `ctypes.*`, ...). Outside
re-check rt18-R1 F1 reached `gi_frame` -> `f_builtins` -> `__import__`/`open` through a class made by
calling a metaclass; the class guards (jail_check_guards.py) close that way, this closes the next one.

The hook cannot be removed once added, so it is gated: it acts only between `start(code)` and `stop(code)`
(around the call of `check_func`, not the module-level code: the type-marker wrapper compiles its helper there),
and `stop` takes the check's own code object, which the check cannot read (`__code__` is refused here). The
worker's I/O before and after (reading the request, formatting a traceback, writing the reply) runs ungated.
`compile`, `exec` and `sys._getframe` are refused only when a check's code (or any code outside the standard
library and these jail files) asks: `dataclasses` and `namedtuple` compile their generated methods, and
`namedtuple`/`Enum` read their caller's module name. A module a check may import is imported by the worker
before (`warm_imports`), so an `import` event during a check is always some other module."""

from __future__ import annotations

import importlib
import os
import pkgutil
import sys
from typing import Any, Callable

_REFUSED = frozenset({"open", "import", "code.__new__", "function.__new__",
                      "sys._current_frames", "sys.settrace", "sys.setprofile", "sys.addaudithook",
                      "builtins.input", "gc.get_objects", "gc.get_referrers", "gc.get_referents",
                      "marshal.loads", "marshal.load", "pickle.find_class", "cpython.run_stdin"})
"""Events refused whoever asks while a check runs."""
_REFUSED_PREFIXES = ("os.", "subprocess.", "socket.", "ctypes.", "shutil.", "glob.", "pty.", "fcntl.",
                     "resource.", "signal.", "mmap.", "sqlite3.", "urllib.", "http.", "ftplib.", "smtplib.",
                     "poplib.", "imaplib.", "nntplib.", "telnetlib.", "webbrowser.", "tempfile.", "syslog.",
                     "winreg.", "msvcrt.", "_winapi.", "cpython.")
_BY_CALLER = frozenset({"exec", "compile", "sys._getframe", "sys._getframemodulename", "object.__getattr__"})
"""Events refused when asked by code outside the standard library and the jail's own files."""
_TRUSTED_PREFIXES = ("<frozen ",) + tuple(os.path.join(d, "") for d in
                                          {os.path.dirname(os.__file__), os.path.dirname(os.path.abspath(__file__))})
CHECK_MODULES = (
    "re", "math", "cmath", "json", "datetime", "decimal", "fractions", "collections", "itertools", "functools",
    "operator", "string", "statistics", "copy", "typing", "dataclasses", "enum", "bisect", "heapq", "numbers",
    "unicodedata", "calendar", "uuid", "difflib", "urllib.parse", "hashlib", "textwrap", "base64", "binascii",
    "zlib", "html", "ipaddress", "keyword", "abc", "colorsys", "graphlib")
"""The modules a check may import (`envscaler_core.scenarios.check_modules.PURE_MODULES`; the jail runs no
envscaler_core code, and tests/sandbox holds the two equal)."""
_WARM = ("_strptime",)
"""Modules an allowed module imports lazily (`datetime.strptime` imports `_strptime`)."""


def trusted_file(filename: str) -> bool:
    """Is `filename` a file of the standard library or of the jail (frozen importlib counts)? A check's code
    is `<check>`; code `dataclasses` generates is `<string>`: neither is trusted, and a check can make no code
    object of its own to name a file (`compile`, `code.__new__` are refused here). A plain prefix test, no
    `realpath`: it runs for every method a dataclass compiles, in a fresh process per check."""
    return filename.startswith(_TRUSTED_PREFIXES)


def warm_imports(modules: tuple[str, ...] = CHECK_MODULES) -> None:
    """Import `modules`, each package's public submodules and the modules they import lazily, so no module a
    check may use is read from disk while the hook refuses `open` and `import` (a missing one is skipped)."""
    for name in modules + _WARM:
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        for sub in pkgutil.iter_modules(getattr(module, "__path__", [])):
            if not sub.name.startswith("_") and f"{name}.{sub.name}" != "json.tool":
                try:
                    importlib.import_module(f"{name}.{sub.name}")
                except ImportError:
                    pass


_GATE: list[Callable[[Any], None]] = []


def _no_gate(code: Any) -> None:
    return None


def check_gate(audit: bool = True) -> tuple[Callable[[Any], None], Callable[[Any], None]]:
    """The hook's `start(code)`/`stop(code)` gate; the hook is added on the first call in a process. Without
    `audit` (a pool's `check_audit` limit off) the gate does nothing and no hook is added."""
    if not audit:
        return _no_gate, _no_gate
    if not _GATE:
        _GATE.extend(_install())
    return _GATE[0], _GATE[1]


def _install() -> tuple[Callable[[Any], None], Callable[[Any], None]]:
    """Add the hook and return its gate."""
    gate: list[Any] = [None, False]  # [the running check's code object or None, inside the hook]
    getframe = sys._getframe

    def refuse(event: str, args: tuple) -> None:
        if gate[0] is None or gate[1]:
            return
        if event in _BY_CALLER:
            if event == "exec" and args and args[0] is gate[0]:
                return
            gate[1] = True
            try:
                caller = getframe(1).f_code.co_filename
            finally:
                gate[1] = False
            if trusted_file(caller):
                return
        elif event not in _REFUSED and not event.startswith(_REFUSED_PREFIXES):
            return
        shown = f"{args[1]!s:.40} ({event})" if event == "object.__getattr__" and len(args) > 1 else \
            f"import {args[0]!s:.60}" if event == "import" and args else event
        raise RuntimeError(f"a check may not: {shown}")

    def start(code: Any) -> None:
        gate[0] = code

    def stop(code: Any) -> None:
        if gate[0] is code:
            gate[0] = None

    sys.addaudithook(refuse)
    return start, stop
