"""Commands we print for the user to paste: every word that comes from data (env ids, run ids, paths,
store URLs, model names) is shell-quoted, so an env id like `env_$(id>/tmp/x);x` stays one inert word
when pasted (red team round 5, F4: `serve-mcp env_$(id>...);x` was printed as is, and ran `id`)."""

from __future__ import annotations

import shlex


def shell_word(value: object) -> str:
    """`value` as one POSIX shell word (unchanged when it needs no quoting: `run1`, `/tmp/a.duckdb`)."""
    return shlex.quote(str(value))


def shell_words(*words: object) -> str:
    """`words` as a command line: each one shell-quoted, joined by spaces."""
    return " ".join(shell_word(w) for w in words)
