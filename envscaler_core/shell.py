"""Commands we print for the user to paste: every word that comes from data (env ids, run ids, paths,
store URLs, model names) is shell-quoted, so an env id like `env_$(id>/tmp/x);x` stays one inert word
when pasted (red team round 5, F4: `serve-mcp env_$(id>...);x` was printed as is, and ran `id`).

A word holding a character of `inert_text.UNSAFE_IN_LINE` (a control, newline or tab included, a line
separator, a bidi override) is
written in `$'...'` quoting (bash, zsh, ksh, POSIX.1-2024 sh) with those characters as `\\xHH` escapes
of their UTF-8 bytes: the printed command shows no raw control or reordering character, and pasted it
is the same word (red team round 6, F4: shlex.quote kept them raw, so a right-to-left override made the
command shown differ from the command pasted; red team 8, F5: a newline alone got plain single quotes,
so the word was printed over two lines)."""

from __future__ import annotations

import shlex

from envscaler_core.inert_text import UNSAFE_IN_LINE, has_unsafe_in_line


def shell_word(value: object) -> str:
    """`value` as one POSIX shell word (unchanged when it needs no quoting: `run1`, `/tmp/a.duckdb`)."""
    text = str(value)
    if has_unsafe_in_line(text):
        return "$'" + "".join(_ansi_c(c) for c in text) + "'"
    return shlex.quote(text)


def _ansi_c(char: str) -> str:
    if char in "\\'":
        return "\\" + char
    if UNSAFE_IN_LINE.fullmatch(char):
        return "".join(f"\\x{b:02x}" for b in char.encode("utf-8"))
    return char


def shell_words(*words: object) -> str:
    """`words` as a command line: each one shell-quoted, joined by spaces."""
    return " ".join(shell_word(w) for w in words)
