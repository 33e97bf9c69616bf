"""The one table of characters that make shown text differ from the text itself, and their escapes.

Env ids, state keys, tasks and errors come from LLMs and imported files. A control character is
executed by a terminal, a line separator other than newline splits one line in two for
`str.splitlines()` and JavaScript, a bidi mark or override reorders what is displayed, so a command
shown is not the command pasted; an invisible character (a zero-width space, a soft hyphen, a tag
character, a variation selector) is displayed as nothing, so `env_l\\u200bib` looks like `env_lib`
(rt22-R12 F3). Every output path (the CLI's terminal text, commands printed for
pasting, the HTML report) escapes the same set, here (red team round 6, F3, F4: each path had its own
list, and U+2028 passed one of them).

Newline and tab stay raw in `inert`, since whole multi-line texts (an error with its traceback, a task,
the CLI's stdout) pass through it. A value shown inside one line (an env id in a note, a command word, a
one-line error) goes through `inert_line`, which escapes them too: an env id holding a newline printed a
whole fake import summary (red team 8, F5)."""

from __future__ import annotations

import re

# C0 controls but tab and newline, DEL, C1 controls (NEL among them), the line and paragraph separators;
# then what a renderer draws as nothing or uses only to reorder: Unicode's format characters (category Cf:
# the bidi marks, embeddings, overrides and isolates, zero-width space and joiners, word joiner, byte order
# mark, soft hyphen, tag characters, Arabic and Egyptian format marks; as of Unicode 15.1) and its other
# default-ignorable code points (variation selectors, combining grapheme joiner, Hangul fillers, the
# reserved ranges kept for such characters). tests/cli/test_invisible_characters_shown_escaped.py checks
# the Cf part against this Python's Unicode database.
UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f"
                    "\u00ad\u034f\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u115f\u1160"
                    "\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u2028-\u202e\u2060-\u206f\u3164"
                    "\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufffb"
                    "\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
                    "\U000e0000-\U000e0fff]")


# the same and newline and tab: what may not be raw inside one line of output
UNSAFE_IN_LINE = re.compile(UNSAFE.pattern.replace("\x00-\x08\x0b-\x1f", "\x00-\x1f", 1))


def _escape(match: re.Match[str]) -> str:
    """`\\xNN` below DEL (as Python shows them); `\\uNNNN` from DEL up, which is also JSON's escape, so
    JSON printed with ensure_ascii=False (C1 controls and separators left raw) stays valid JSON. Beyond
    U+FFFF (a tag character) that is the UTF-16 pair JSON writes, `\\udb40\\udc20`: Python's
    `\\U000e0020` is no JSON escape, and `\\ue0020` would read back as U+E002 and a `0`."""
    code = ord(match.group())
    if code < 0x7f:
        return f"\\x{code:02x}"
    if code > 0xffff:
        code -= 0x10000
        return f"\\u{0xd800 + (code >> 10):04x}\\u{0xdc00 + (code & 0x3ff):04x}"
    return f"\\u{code:04x}"


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
