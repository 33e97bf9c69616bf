"""The one table of characters that make shown text differ from the text itself, and their escapes.

Env ids, state keys, tasks and errors come from LLMs and imported files. A control character is
executed by a terminal, a line separator other than newline splits one line in two for
`str.splitlines()` and JavaScript, a bidi mark or override reorders what is displayed, so a command
shown is not the command pasted. Every output path (the CLI's terminal text, commands printed for
pasting, the HTML report) escapes the same set, here (red team round 6, F3, F4: each path had its own
list, and U+2028 passed one of them).

Newline and tab stay raw in `inert`, since whole multi-line texts (an error with its traceback, a task,
the CLI's stdout) pass through it. A value shown inside one line (an env id in a note, a command word, a
one-line error) goes through `inert_line`, which escapes them too: an env id holding a newline printed a
whole fake import summary (red team 8, F5)."""

from __future__ import annotations

import re

# C0 controls but tab and newline, DEL, C1 controls (NEL among them), the line and paragraph separators,
# and the Unicode bidi marks, embeddings, overrides and isolates
UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


# the same and newline and tab: what may not be raw inside one line of output
UNSAFE_IN_LINE = re.compile(UNSAFE.pattern.replace("\x00-\x08\x0b-\x1f", "\x00-\x1f", 1))


def _escape(match: re.Match[str]) -> str:
    """`\\xNN` below DEL (as Python shows them); `\\uNNNN` from DEL up, which is also JSON's escape, so
    JSON printed with ensure_ascii=False (C1 controls and separators left raw) stays valid JSON."""
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x7f else f"\\u{code:04x}"


def inert(text: str) -> str:
    """`text` with every UNSAFE character written as its escape (newline and tab kept)."""
    return UNSAFE.sub(_escape, text)


def inert_line(text: str) -> str:
    """`text` with every UNSAFE_IN_LINE character written as its escape: shown as one line, whatever it holds."""
    return UNSAFE_IN_LINE.sub(_escape, text)


def has_unsafe(text: str) -> bool:
    return UNSAFE.search(text) is not None


def has_unsafe_in_line(text: str) -> bool:
    return UNSAFE_IN_LINE.search(text) is not None
