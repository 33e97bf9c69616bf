"""`--help` as people read it: no `<bool>` after a flag (it takes no value), `<path>` rather than
`<list[Path]>` for a repeatable option (its help says it repeats), and a description for every
`--config`. Applied to the whole command tree, so verbs added later get the same treatment."""

from __future__ import annotations

import re
from typing import Any

CONFIG_HELP = "Settings file (.toml/.json/.yaml); see docs/configuration.md."
_LIST = re.compile(r"^<list\[(.+)\]>$")


def tidy_help(command: Any) -> None:
    """Walk `command` (a click/typer command or group) and tidy every option's help display."""
    for param in getattr(command, "params", []):
        _tidy_param(param)
    _tidy_help_option(command)
    for sub in getattr(command, "commands", {}).values():
        tidy_help(sub)


def _tidy_help_option(command: Any) -> None:
    """`--help` is made per call (`get_help_option`), not kept in `params`."""
    make = getattr(command, "get_help_option", None)
    if make is None or getattr(make, "_tidied", False):
        return

    def get_help_option(ctx: Any) -> Any:
        option = make(ctx)
        if option is not None:
            _tidy_param(option)
        return option

    get_help_option._tidied = True  # type: ignore[attr-defined]
    command.get_help_option = get_help_option


def _tidy_param(param: Any) -> None:
    if getattr(param, "param_type_name", "") == "argument" and getattr(param, "nargs", 1) == -1:
        _tidy_variadic_argument(param)
        return
    if getattr(param, "param_type_name", "") != "option" or getattr(param, "metavar", None) is not None:
        _describe_config(param)
        return
    if getattr(param, "is_flag", False) or getattr(param, "count", False):
        param.metavar = ""
    elif getattr(param, "multiple", False):
        try:
            shown = param.display_type(None)
        except Exception:  # noqa: BLE001 - a display nicety; leave typer's own rendering
            shown = ""
        found = _LIST.match(shown or "")
        if found:
            param.metavar = f"<{found.group(1).lower()}>"
    _describe_config(param)


def _describe_config(param: Any) -> None:
    if "--config" in getattr(param, "opts", []) and not getattr(param, "help", None):
        param.help = CONFIG_HELP


def _tidy_variadic_argument(param: Any) -> None:
    """`more...  <path>` rather than `<list[Path]>`: the `...` after the name already says it repeats."""
    try:
        shown = param.display_type(None)
    except Exception:  # noqa: BLE001 - a display nicety; leave typer's own rendering
        return
    found = _LIST.match(shown or "")
    if found and hasattr(param, "display_type_rich"):
        label = f"<{found.group(1).lower()}>"
        param.display_type_rich = lambda ctx: label
