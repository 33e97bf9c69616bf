"""Reading untrusted JSON files so that what is wrong with one record stays that record's problem.

`json.loads` alone has three whole-file failure modes a hostile (or just odd) record can trigger, and
one silent one:
* a value nested about a thousand levels deep raises RecursionError, so one deep record would refuse
  the whole file. Here the parse is bounded instead: when the fast parse recurses too deeply, every
  container opened deeper than `CUT_DEPTH` is cut out of the text (one linear scan, no recursion) and
  replaced by `[]`; the record that held it is still far deeper than any record may be, so the
  record checks (`sound`) report it as nested too deeply and skip it, and its siblings are read;
* an integer literal of more than 4300 digits raises ValueError (CPython's int-from-text limit): such
  a literal becomes a `HugeInt`, which `sound` reports as that record's problem;
* an object with a repeated key keeps the last value without a word: such an object is read as a
  `Duplicated` dict that remembers the repeated keys (and all its pairs, so the top level of the env
  metadata can report each repeated env id).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

from envscaler_core.models.plain_json import MAX_DEPTH, plain_json_problem

CUT_DEPTH = MAX_DEPTH + 3
"""Containers opened deeper than this (counted from the file's top level, whose records sit one or two
levels down) are cut out when the fast parse recurses too deeply; their record is too deep anyway."""
MAX_INT_DIGITS = 4300  # CPython's default `sys.get_int_max_str_digits()`

_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]', re.S)


class FileError(ValueError):
    """The whole file is unusable (unreadable, not UTF-8, not JSON)."""


class HugeInt:
    """An integer literal too long to convert (kept as its digit count, never as a number)."""

    def __init__(self, text: str) -> None:
        self.digits = len(text.lstrip("-"))

    def __repr__(self) -> str:
        return f"<integer with {self.digits} digits>"


class Duplicated(dict):  # type: ignore[type-arg]
    """A JSON object that named some key more than once; `pairs` are all of them, in file order."""

    def __init__(self, pairs: list[tuple[str, Any]]) -> None:
        super().__init__(pairs)
        self.pairs = pairs
        seen: dict[str, int] = {}
        for key, _ in pairs:
            seen[key] = seen.get(key, 0) + 1
        self.repeated = {k: n for k, n in seen.items() if n > 1}


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    value = dict(pairs)
    return value if len(value) == len(pairs) else Duplicated(pairs)


def _int(text: str) -> int | HugeInt:
    return HugeInt(text) if len(text.lstrip("-")) > MAX_INT_DIGITS else int(text)


def _parse(text: str) -> Any:
    return json.loads(text, object_pairs_hook=_object, parse_int=_int)


def _cut_deep(text: str) -> tuple[str, list[tuple[int, int]]]:
    """`text` with every container opened at depth `CUT_DEPTH` replaced by `[]`, and the cuts made
    (position in the new text, characters removed) so error positions map back to the file."""
    pieces: list[str] = []
    cuts: list[tuple[int, int]] = []
    depth, kept_to, cut_from, removed = 0, 0, -1, 0
    for match in _TOKEN.finditer(text):
        char = match.group()[0]
        if char in "[{":
            depth += 1
            if depth == CUT_DEPTH:
                cut_from = match.start()
        elif char in "]}":
            if depth == CUT_DEPTH and cut_from >= 0:
                pieces.append(text[kept_to:cut_from] + "[]")
                length = match.end() - cut_from
                cuts.append((cut_from - removed + 2, length - 2))
                removed += length - 2
                kept_to, cut_from = match.end(), -1
            depth = max(depth - 1, 0)
    pieces.append(text[kept_to:])
    return "".join(pieces), cuts


def _file_position(pos: int, cuts: list[tuple[int, int]]) -> int:
    return pos + sum(length for at, length in cuts if at <= pos)


def _where(text: str, pos: int) -> str:
    line = text.count("\n", 0, pos) + 1
    column = pos - (text.rfind("\n", 0, pos) + 1) + 1
    return f"line {line} column {column}"


def load_json(path: Path) -> Any:
    """The file's JSON, with deep containers cut, huge integers and repeated keys marked (see above). A
    UTF-8 byte order mark (Windows tools write one) is not data: `utf-8-sig` drops it."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise FileError(f"{path}: no such file") from None
    except UnicodeDecodeError as exc:
        from envscaler_core.text_files import not_utf8_reason, wide_encoding

        data = path.read_bytes()
        if wide_encoding(data[:4]) is not None:
            raise FileError(f"{path}: {not_utf8_reason(path, data, exc)}") from None
        raise FileError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise FileError(f"{path}: cannot read ({exc.strerror or exc})") from None
    cuts: list[tuple[int, int]] = []
    try:
        try:
            return _parse(text)
        except RecursionError:
            cut, cuts = _cut_deep(text)
            return _parse(cut)
    except json.JSONDecodeError as exc:
        raise FileError(f"{path}: invalid JSON: {exc.msg} at {_where(text, _file_position(exc.pos, cuts))}") from None
    except RecursionError:
        raise FileError(f"{path}: JSON nested too deeply to read (limit {sys.getrecursionlimit()})") from None


def json_problem(record: Any) -> str | None:
    """Why `record` is not strict, storable JSON (and where in it); None when it is. Iterative: any
    depth is fine to look at."""
    stack: list[tuple[Any, int]] = [(record, 1)]
    while stack:
        value, depth = stack.pop()
        if depth > MAX_DEPTH:
            return f"nested more than {MAX_DEPTH} levels deep"
        if isinstance(value, HugeInt):
            return (f"holds an integer with {value.digits} digits{_at(record, value)} (more than {MAX_INT_DIGITS}: "
                    "not a number a JSON reader converts)")
        if isinstance(value, Duplicated):
            key, n = next(iter(value.repeated.items()))
            return f"names the key {safe(key)!r} {n} times in one object{_at(record, value)} (JSON readers keep only one)"
        if isinstance(value, dict):
            stack.extend((v, depth + 1) for v in value.values())
        elif isinstance(value, list):
            stack.extend((v, depth + 1) for v in value)
    problem = plain_json_problem(record)
    return f"{problem}, which strict JSON cannot carry" if problem else None


def _at(record: Any, target: Any) -> str:
    """' at a.b[2]' for the value `target` (by identity) inside `record`; '' at the top."""
    stack: list[tuple[Any, str]] = [(record, "")]
    while stack:
        value, where = stack.pop()
        if value is target:
            return f" at {where}" if where else ""
        if isinstance(value, dict):
            stack.extend((v, f"{where}.{safe(k)}" if where else safe(k)) for k, v in value.items())
        elif isinstance(value, list):
            stack.extend((v, f"{where}[{i}]") for i, v in enumerate(value))
    return ""


def safe(text: str) -> str:
    """`text` printable and storable: lone surrogates (legal in JSON text, not in UTF-8) as `\\udXXX`."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
