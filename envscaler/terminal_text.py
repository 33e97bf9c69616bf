"""Text from runs, env classes, states and imported files, made safe to print on a terminal.

Env ids, state keys, task texts and error messages come from LLMs and from files users import; an
escape sequence in one of them (`\\x1b]0;title\\x07`, `\\r` to overwrite a line, a bidi override) would
be executed by the terminal that prints `status` or `validate --text`. Everything the CLI prints on
stdout, and its one-line errors, go through `visible`: control characters other than newline and tab,
line separators other than newline (U+2028, U+2029, NEL: `str.splitlines()` sees one line per printed
line) and bidi marks become `\\xNN` / `\\uNNNN` escapes, so the text reads the same and does nothing. (JSON output is
already escaped by `json.dumps`; the live progress display on stderr is the CLI's own drawing.)

Escaped, never removed: click strips CSI sequences (`\\x1b[2J`, `\\x1b[1;31m`) from what it echoes to a
pipe or a file *before* the stream sees them, so an env id `env_\\x1b]0;X\\x07\\x1b[2Jx` was printed as
`env_\\x1b]0;X\\x07x`, another id than the real one (red team round 5, F5). The CLI therefore tells click
never to strip (`color=True`, cli.py): every sequence reaches `visible` and is shown escaped."""

from __future__ import annotations

from typing import Any, TextIO

from envscaler_core.inert_text import inert, inert_line

def visible(text: str) -> str:
    """`text` with every character of `inert_text.UNSAFE` escaped: one escaper for all output (red team
    round 6, F3: U+2028 was printed raw by `status` and `validate --text`, while `sandbox exec` escaped it
    with its own table)."""
    return inert(text)


def visible_line(text: str) -> str:
    """`text` as one line of output: `visible`, and newline and tab escaped too (a note, a status line, a
    one-line error holding an env id from a file; red team 8, F5: a newline in an id forged whole lines)."""
    return inert_line(text)


class VisibleText:
    """A text stream whose writes pass through `visible`; everything else is the wrapped stream's."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        self._stream.write(visible(text))
        return len(text)

    @property
    def raw(self) -> TextIO:
        """The wrapped stream, for the CLI's own drawing (`status --watch` clearing the screen)."""
        return self._stream

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def raw_stream(stream: TextIO) -> TextIO:
    """`stream` without a `VisibleText` around it: escape sequences we write on purpose must reach it."""
    return stream.raw if isinstance(stream, VisibleText) else stream
