"""How to call this CLI from the user's shell, for the commands we print (`resume RUN`, `status RUN`).

After `make demo` the venv is not activated: `envscaler` alone is "command not found" there, so a printed
`envscaler resume RUN` would not work as pasted. When the running executable is not the `envscaler` on
PATH, the commands we print name it by path instead, with a hint how to activate the venv."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from envscaler_core.shell import shell_word, shell_words


def cli_command() -> tuple[str, str | None]:
    """How to call this CLI from the user's shell, and a hint when it is not on PATH (after `make demo` the
    venv is not activated: `envscaler` alone is "command not found")."""
    me = Path(sys.argv[0]).resolve() if sys.argv and sys.argv[0] else Path(sys.executable).with_name("envscaler")
    if me.name != "envscaler":  # `python -m envscaler`, or called in-process: the name is all we know
        return "envscaler", None
    found = shutil.which("envscaler")
    if found and Path(found).resolve() == me:
        return "envscaler", None
    try:
        shown = "./" + str(me.relative_to(Path.cwd()))
        shown = shown.replace("./.venv/", ".venv/", 1)
    except ValueError:
        shown = str(me)
    activate = me.parent / "activate"
    shown = shell_word(shown)  # a project directory with a space in its path
    hint = (f"`envscaler` is not on your PATH: call it as {shown}, or first `source {shell_word(activate)}`"
            if activate.is_file() else f"`envscaler` is not on your PATH: call it as {shown}")
    return shown, hint


def cli_call(*words: str, tail: str = "") -> str:
    """`envscaler WORDS...` as the user can paste it (see the module docstring): each word shell-quoted,
    since run ids, env ids, paths and store URLs come from data (`envscaler_core.shell`); `tail` is text
    we wrote ourselves, quoted already or a placeholder (`store_option`'s ` --db URL`, ` --max-tokens N`)."""
    return f"{cli_command()[0]} {shell_words(*words)}{tail}"


def resume_call(run_id: str, store_url: str | None = None, extra: str = "") -> str:
    """`envscaler resume RUN [--db URL]`."""
    from envscaler_core.config import store_option

    return cli_call("resume", run_id, tail=f"{store_option(store_url)}{extra}")

