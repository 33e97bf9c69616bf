"""Reading the text files users give us (sources, EnvScaler imports, `validate --code/--state`, config
files): UTF-8, with a leading UTF-8 byte order mark dropped (Windows tools write one; it is not data).
A file in UTF-16 or UTF-32 (Windows' "Unicode", PowerShell 5's `>` and `Out-File` default) starts with
its own byte order mark: it is named as what it is, with the command that converts it, instead of
being called binary or "not UTF-8" at some byte."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from envscaler_core.shell import shell_word

# longest first: the UTF-32 little-endian mark begins with the UTF-16 one
_WIDE_BOMS = ((b"\xff\xfe\x00\x00", "UTF-32", "little-endian"), (b"\x00\x00\xfe\xff", "UTF-32", "big-endian"),
              (b"\xff\xfe", "UTF-16", "little-endian"), (b"\xfe\xff", "UTF-16", "big-endian"))


class NotUTF8(ValueError):
    """A file that is not UTF-8 text; the message says what it is and, for UTF-16/32, how to convert it."""


def wide_encoding(head: bytes) -> str | None:
    """'UTF-16 (little-endian)' etc. when `head` starts with a UTF-16 or UTF-32 byte order mark."""
    for bom, name, order in _WIDE_BOMS:
        if head.startswith(bom):
            return f"{name} ({order})"
    return None


def wide_text_advice(path: Path | str, encoding: str) -> str:
    family = encoding.split()[0]
    return (f"{encoding} text, not UTF-8 (it starts with a {family} byte order mark); convert it, e.g. "
            f"`iconv -f {family} -t UTF-8 {shell_word(path)} > {shell_word('utf8.' + Path(path).name)}`")


def not_utf8_reason(path: Path | str, data: bytes, exc: UnicodeDecodeError) -> str:
    """Why `data` (the file's bytes) is not UTF-8, in words a user can act on."""
    encoding = wide_encoding(data[:4])
    if encoding is not None:
        return wide_text_advice(path, encoding)
    return f"not UTF-8 text: {exc.reason} at byte {exc.start}"


def read_utf8(path: Path | str) -> str:
    """The file's text (UTF-8, a leading BOM dropped); NotUTF8 naming what it is otherwise. OSError passes."""
    data = Path(path).read_bytes()
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise NotUTF8(not_utf8_reason(path, data, exc)) from None


def json_value(text: str, where: str, error: type[Exception]) -> Any:
    """`json.loads(text)`, or `error` naming `where` and why in one line: not JSON, nested deeper than the
    parser recurses, or an integer longer than Python reads from text (rt17-B F3: a bare RecursionError
    escaped naming no file, and a 5,000-digit integer in a JSONL line was called an unreadable Parquet file)."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise error(f"{where}: not JSON: {exc}") from None
    except RecursionError:
        raise error(f"{where}: nested too deeply to read") from None
    except ValueError:  # the only other: int() of a literal over the interpreter's digit limit
        raise error(f"{where}: an integer of more than {sys.get_int_max_str_digits()} digits, "
                    "which Python does not read from text") from None


def jsonl_objects(path: Path, error: type[Exception]) -> list[tuple[int, dict[str, Any]]]:
    """(line number, object) for each non-blank line of a JSONL file (the BFCL data, an RL export); a line
    that is not UTF-8 or not a JSON object (`json_value`) raises `error` naming file and line, so each reader
    keeps its own error type (a UnicodeDecodeError named neither: rt10-A F5)."""
    rows = []
    with open(path, "rb") as fh:
        for lineno, raw in enumerate(fh, 1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise error(f"{path}:{lineno}: not UTF-8 (byte {exc.start + 1} of the line)") from None
            if not line.strip():
                continue
            row = json_value(line, f"{path}:{lineno}", error)
            if not isinstance(row, dict):
                raise error(f"{path}:{lineno}: expected a JSON object")
            rows.append((lineno, row))
    return rows
