"""What an invalid configuration says: each bad value with where it came from (the environment
variable that set it, else the file) and, for an unknown name, the closest valid one."""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any, Union, get_args, get_origin

from pydantic import BaseModel, ValidationError

from envscaler_core.config import Settings


def describe_invalid(exc: ValidationError, path: str | Path | None, origin: dict[tuple[str, ...], tuple[str, str]],
              overrides: dict[str, Any]) -> str:
    """Name where each bad value came from: the environment variable that set it, else the file."""
    problems, from_file = [], False
    for err in exc.errors():
        loc = tuple(str(p) for p in err["loc"])
        field = ".".join(loc)
        # a variable that sets this setting, one inside it, or (an unknown section) one under it
        var = next((named for keys, named in origin.items()
                    if loc[:len(keys)] == keys or keys[:len(loc)] == loc), None)
        message = _unknown_setting(loc) if err["type"] == "extra_forbidden" else err["msg"]
        if var is not None and not _overridden(overrides, loc):
            problems.append(f"{field}: {message} (from environment variable {var[0]}={var[1]!r}; fix or unset it)")
        else:
            from_file = True
            problems.append(f"{field}: {message}")
    where = f" in {path}" if path and from_file else ""
    return f"invalid configuration{where}: " + "; ".join(problems)


def _unknown_setting(loc: tuple[str, ...]) -> str:
    """'unknown setting; did you mean scen.per_env?' (or the valid names when none is close)."""
    names = valid_names(loc[:-1])
    parent = ".".join(loc[:-1])
    close = difflib.get_close_matches(loc[-1].lower(), names, n=1, cutoff=0.6)
    if close:
        return f"unknown setting; did you mean {parent + '.' if parent else ''}{close[0]}?"
    if names:
        return f"unknown setting; {'sections' if not parent else parent + ' has'}: {', '.join(names)}"
    return "unknown setting"


def valid_names(loc: tuple[str, ...]) -> list[str]:
    """Setting names valid under the section path `loc` (section names for `()`); [] if `loc` is not a section."""
    node: Any = Settings
    for key in loc:
        node = unwrap_optional(node)
        if isinstance(node, type) and issubclass(node, BaseModel):
            field = next((f for n, f in node.model_fields.items() if key in (n, f.alias)), None)
            if field is None:
                return []
            node = field.annotation
        elif get_origin(node) is dict:
            node = get_args(node)[1]
        else:
            return []
    node = unwrap_optional(node)
    if isinstance(node, type) and issubclass(node, BaseModel):
        return [f.alias or n for n, f in node.model_fields.items()]
    return []


def unwrap_optional(annotation: Any) -> Any:
    """`X | None` -> X."""
    if get_origin(annotation) in (Union, type(int | None)):
        args = [a for a in get_args(annotation) if a is not type(None)]
        return args[0] if len(args) == 1 else annotation
    return annotation


def _overridden(overrides: dict[str, Any], loc: tuple[str, ...]) -> bool:
    node: Any = overrides
    for key in loc:
        if not isinstance(node, dict) or key not in node:
            return False
        node = node[key]
    return True
