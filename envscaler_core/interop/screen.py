"""Which check functions may share a sandbox process with their neighbours, and which run alone.

Batching many scenarios' checks into one process is what makes the audit fast, but code in one
process can reach the driver and the modules the next check uses (`gc.get_objects()`, a function's
`__globals__`, patching `json` or `datetime`...) and so forge its neighbours' verdicts. Checks as
EnvScaler's generator writes them are pure functions over dicts; a check that touches any of these
escape hatches is run in a process of its own instead, where it can only forge its own verdict (which
its author controls anyway). The screen is lexical and conservative: a false alarm costs one process.
"""

from __future__ import annotations

import re

SAFE_MODULES = {"re", "math", "datetime", "collections", "itertools", "functools", "decimal", "string",
                "statistics", "typing", "time", "json", "copy", "operator"}
_HATCHES = re.compile(
    r"__\w+__"  # dunders: __class__, __globals__, __subclasses__, __builtins__, __import__ ...
    r"|\b(?:gc|sys|ctypes|inspect|importlib|builtins|signal|os|posix|subprocess|threading|multiprocessing|"
    r"eval|exec|compile|globals|locals|vars|getattr|setattr|delattr|breakpoint|memoryview|open|input)\b")
_IMPORT = re.compile(r"^\s*(?:from\s+([\w.]+)\s+import|import\s+([\w.,\s]+?)(?:\s+as\s+\w+)?\s*$)", re.MULTILINE)
_ATTR_ASSIGN = re.compile(r"\.\s*[A-Za-z_]\w*\s*(?:[-+*/%&|^@]|//|\*\*|<<|>>)?=(?!=)")


def needs_isolation(source: object) -> bool:
    """True when `source` (a check function's text) might reach beyond its own arguments."""
    if not isinstance(source, str):
        return False  # not code: the harness reports it without running anything
    if _HATCHES.search(source) or _ATTR_ASSIGN.search(source):
        return True
    for match in _IMPORT.finditer(source):
        names = match.group(1) or match.group(2) or ""
        if any(name.strip().split(".")[0] not in SAFE_MODULES for name in names.split(",") if name.strip()):
            return True
    return bool(re.search(r"\bimport\b", source)) and not _IMPORT.search(source)  # an import it could not parse
