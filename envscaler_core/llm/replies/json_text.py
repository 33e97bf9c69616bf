"""Find JSON objects inside a model's answer text and read them leniently but unambiguously.

Where: fenced blocks first (any fence language or none; the closing fence must start a line, so a
fence *inside* a JSON string does not end the block), then every top-level balanced `{…}` of the
text, found by a scanner that respects string quoting.

How: strict JSON (control characters allowed inside strings: models put raw newlines in code
fields); else the JSON5-like spelling rewritten to JSON outside strings (comments, trailing commas,
single-quoted strings, bare keys, True/False/None); else a Python literal (tuples, escapes), which
many models trained on Python emit.
Each relaxation has exactly one reading, so accepting it cannot change the meaning. A string that
itself holds a JSON object (double encoding) is read once more.
"""

from __future__ import annotations

import bisect
import json
import re
from dataclasses import dataclass
from typing import Any

from envscaler_core import pyast
from envscaler_core.wire_values import not_read_leniently, too_many_values

_OPENER = re.compile(r"(`{3,}|~{3,})[ \t]*([^\n`]*)\n")
_CLOSER = re.compile(r"(?m)^[ \t]*(`{3,}|~{3,})[ \t]*$")


class NotJSON(ValueError):
    """A candidate that no accepted reading turns into a value; the message says where and why."""


@dataclass(frozen=True)
class Candidate:
    """One place in the answer that may hold the object: its text, span and a human name for it."""

    text: str
    start: int
    end: int
    where: str
    fenced: bool


@dataclass(frozen=True)
class Fence:
    lang: str
    body: str
    start: int
    end: int


def fences(text: str) -> list[Fence]:
    """Fenced blocks in order of appearance: an opening run of 3+ backticks or tildes (a language after
    it), a body, and the first later line that is the same run alone. The closing lines are found once
    and looked up: a regex with a lazy body tried each opening against the rest of the text, which a
    reply of thousands of "```json" lines and no closing one turned into seconds."""
    closers: dict[str, list[tuple[int, int]]] = {}  # run -> [(index of the newline before it, its end)]
    for m in _CLOSER.finditer(text):
        if m.start() > 0 and text[m.start() - 1] == "\n":
            closers.setdefault(m.group(1), []).append((m.start() - 1, m.end()))
    found, pos = [], 0
    while (m := _OPENER.search(text, pos)) is not None:
        closed = None
        for run_end in range(m.end(1), m.start(1) + 2, -1):  # the longest run first, as the regex did
            run, lang = text[m.start(1):run_end], text[run_end:m.end() - 1].lstrip(" \t")
            if "`" in lang or run not in closers:
                continue
            lines = closers[run]
            k = bisect.bisect_left(lines, (m.end(), -1))
            if k < len(lines):
                closed = (lang, lines[k])
                break
        if closed is None:
            pos = m.start() + 1
            continue
        lang, (newline, end) = closed
        found.append(Fence(lang.strip().lower(), text[m.end():newline], m.start(), end))
        pos = end
    return found


# Unrolled and possessive: `"(?:[^"\\]|\\.)*"` matched the same strings but kept a backtracking frame per
# character, ~115 bytes each (a 4 MB argument string cost the host +474 MB and 0.5 s per scan; red team 10,
# F4); these match in one pass and keep nothing.
_DOUBLE = re.compile(r'"[^"\\]*+(?:\\.[^"\\]*+)*+"', re.DOTALL)
_SINGLE = re.compile(r"'[^'\\\n]*+(?:\\.[^'\\\n]*+)*+'")
_SPECIAL = re.compile(r"[\"'{}\[\]]")


def _string_end(text: str, i: int) -> int:
    """Index just past the string literal starting at `text[i]` (a quote): an unclosed double-quoted
    string runs to the end; a single quote that does not close on its line is an apostrophe in prose."""
    if text[i] == '"':
        match = _DOUBLE.match(text, i)
        return match.end() if match else len(text)
    match = _SINGLE.match(text, i)
    if match:
        return match.end()
    newline = text.find("\n", i)
    return i + 1 if newline == -1 else newline


def matching_brace(text: str, start: int) -> int | None:
    """End index (exclusive) of the balanced `{…}` starting at `start`, honouring quotes; None if it
    never closes (a truncated or prose brace)."""
    end = balanced_end(text, start)
    return end if end is not None and text[end - 1] == "}" else None


def balanced_end(text: str, start: int) -> int | None:
    """End index (exclusive) of the balanced `{…}` or `[…]` starting at `start` (which must be one of
    them; anything else is None), honouring quotes; None if it never closes."""
    if text[start:start + 1] not in ("{", "["):
        return None
    return Brackets(text).end(start)


class Brackets:
    """`balanced_end` for many starts in one text, in about linear time overall.

    Scanning from each opening bracket separately is quadratic, and replies do hold thousands of
    brackets that never close (a model looping on `{{{{`, cut off by its output limit: 20,000 of them
    held the event loop for 40 s). One walk from a start settles every bracket it passes outside a
    string, with a stack, and later walks stop at a settled bracket: a bracket reached outside a
    string is scanned from there exactly as if the scan had started at it."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._end: dict[int, int | None] = {}

    def end(self, start: int) -> int | None:
        if start not in self._end:
            self._walk(start)
        return self._end.get(start)

    def _walk(self, start: int) -> None:
        text, stack, i = self.text, [], start
        while (found := _SPECIAL.search(text, i)) is not None:
            i = found.start()
            ch = text[i]
            if ch in "\"'":
                i = max(_string_end(text, i), i + 1)
                continue
            if ch in "{[" and i in self._end:  # settled by an earlier walk: skip it, or nothing closes
                end = self._end[i]
                if end is None:
                    break
                i = end
                continue
            if ch in "{[":
                stack.append(i)
            elif not stack:
                break
            else:
                self._end[stack.pop()] = i + 1
            i += 1
        for unclosed in stack:
            self._end[unclosed] = None
        self._end.setdefault(start, None)


def balanced_objects(text: str) -> list[tuple[int, int]]:
    """Spans of the top-level balanced objects of `text`, left to right (nested ones are part of
    their parent; a brace that never closes is skipped)."""
    spans, i, brackets = [], 0, Brackets(text)
    while (i := text.find("{", i)) != -1:
        end = brackets.end(i)
        if end is None or text[end - 1] != "}":
            i += 1
            continue
        spans.append((i, end))
        i = end
    return spans


def _line_of(text: str, index: int) -> int:
    return text.count("\n", 0, index) + 1


def fenced_candidates(text: str) -> list[Candidate]:
    """The non-empty fenced blocks of `text`, in order."""
    found = []
    for n, block in enumerate(fences(text), start=1):
        body = block.body.strip()
        if body:
            lang = f" ({block.lang})" if block.lang else ""
            found.append(Candidate(body, block.start, block.end, f"fenced block {n}{lang}", True))
    return found


def loose_candidates(text: str, seen: set[str] = frozenset()) -> list[Candidate]:  # type: ignore[assignment]
    """The whole text when it is a JSON string or list, then every top-level balanced object; none
    whose text is in `seen` (already a fenced candidate)."""
    found: list[Candidate] = []
    seen = set(seen)
    whole = text.strip()
    if whole[:1] in ('"', "[") and whole not in seen:  # a double-encoded or listed object
        found.append(Candidate(whole, 0, len(text), "the whole reply", False))
        seen.add(whole)
    for k, (start, end) in enumerate(balanced_objects(text), start=1):
        body = text[start:end]
        if body.strip() not in seen:
            found.append(Candidate(body, start, end, f"object {k} (line {_line_of(text, start)})", False))
            seen.add(body.strip())
    return found


def candidates(text: str) -> list[Candidate]:
    """Fenced blocks (in order), then the balanced objects of the whole text not already covered."""
    fenced = fenced_candidates(text)
    return fenced + loose_candidates(text, {c.text for c in fenced})


def unclosed_object_line(text: str) -> int | None:
    """Line of the first `{` that never closes, when the text has no balanced object at all."""
    start = text.find("{")
    if start == -1 or balanced_objects(text):
        return None
    return _line_of(text, start)


_CONSTANTS = {"True": "true", "False": "false", "None": "null"}
_ODD_BLANKS = frozenset("\u00a0\u200b\u2060\ufeff")


def _json_string(body: str) -> str:
    """A single-quoted string's body as a JSON string literal (its escapes kept, `\\'` unescaped)."""
    return '"' + body.replace("\\'", "'").replace('"', '\\"') + '"'


def _without_comments(text: str) -> str:
    """`//`, `#` and `/* */` comments removed outside strings."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch in "\"'":
            end = _string_end(text, i)
            out.append(text[i:end])
            i = end
        elif text.startswith("//", i) or ch == "#":
            while i < n and text[i] != "\n":
                i += 1
        elif text.startswith("/*", i):
            close = text.find("*/", i + 2)
            i = n if close == -1 else close + 2
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def _relaxed(text: str) -> str:
    """`text` in strict JSON spelling, for the JSON5-like liberties models take, each rewritten only
    outside strings: comments removed, trailing commas removed, single-quoted strings double-quoted,
    bare identifier keys quoted, Python's True/False/None as true/false/null, and non-breaking or
    zero-width spaces (U+00A0, U+200B, U+2060, U+FEFF) used as whitespace made spaces."""
    text = _without_comments(text)
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch in "\"'":
            end = _string_end(text, i)
            out.append(text[i:end] if ch == '"' else _json_string(text[i + 1:end - 1]))
            i = end
            continue
        if ch in _ODD_BLANKS:  # a non-breaking or zero-width space used as JSON whitespace
            out.append(" ")
            i += 1
            continue
        if ch == ",":
            j = i + 1
            while j < n and text[j] in " \t\n":
                j += 1
            if j < n and text[j] in "}]":
                i += 1
                continue
        if ch.isalpha() or ch == "_":
            j = i
            while j < n and (text[j].isalnum() or text[j] == "_"):
                j += 1
            word, k = text[i:j], j
            while k < n and text[k] in " \t":
                k += 1
            if k < n and text[k] == ":" and word not in ("true", "false", "null"):
                out.append(f'"{word}"')
            else:
                out.append(_CONSTANTS.get(word, word))
            i = j
            continue
        out.append(ch)
        i += 1
    return "".join(out)


def _jsonable(value: Any, path: str = "") -> Any:
    """A Python literal's value as JSON data: tuples become lists; other non-JSON values refuse."""
    if isinstance(value, dict):
        if not all(isinstance(k, str) for k in value):
            raise NotJSON(f"a key at {path or 'the top level'} is not a string")
        return {k: _jsonable(v, f"{path}.{k}" if path else k) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v, f"{path}[{i}]") for i, v in enumerate(value)]
    if value is None or isinstance(value, str | bool | int | float):
        return value
    raise NotJSON(f"{path or 'the value'} is a Python {type(value).__name__}, which JSON cannot hold")


def jsonable(value: Any) -> Any:
    """A Python literal's value as JSON data (tuples become lists); NotJSON for other Python values."""
    return _jsonable(value)


def _excerpt(text: str, pos: int) -> str:
    lo, hi = max(0, pos - 20), min(len(text), pos + 20)
    return text[lo:hi].replace("\n", "\\n")


def load_value(text: str) -> Any:
    """The value `text` holds under the readings above; NotJSON with the strict parser's complaint. Text
    holding more values than the host parses is refused unread, by the JSON count before the strict
    parser and by the literal bound before the lenient readings (replies, text calls and arguments all
    come through here; red team 9, F1)."""
    if (too_many := too_many_values(text)) is not None:
        raise NotJSON(f"not read: it would {too_many}")
    try:
        value = json.loads(text, strict=False)
    except RecursionError:  # the C parser recurses per level: ~1,000 levels end it
        raise NotJSON("nested too deeply to read") from None
    except json.JSONDecodeError as exc:
        first = exc
        if (why := not_read_leniently(text)) is not None:
            raise NotJSON(f"{first.msg} at line {first.lineno} column {first.colno}, and not read leniently: "
                          f"it {why}") from None
        value = _lenient(text)
        if value is _NOTHING:
            raise NotJSON(f"{first.msg} at line {first.lineno} column {first.colno} "
                          f"(near {_excerpt(text, first.pos)!r})") from None
    except ValueError as exc:  # e.g. an integer past Python's 4,300-digit conversion limit
        raise NotJSON(str(exc)[:200]) from None
    if isinstance(value, str) and value.strip().startswith(("{", "[")):
        try:
            return load_value(value.strip())
        except NotJSON:
            return value
    return value


_NOTHING = object()


def _lenient(text: str) -> Any:
    relaxed = _relaxed(text)
    if relaxed != text:
        try:
            return json.loads(relaxed, strict=False)
        except (ValueError, RecursionError):
            pass
    if "'" not in text and not re.search(r"\b(True|False|None)\b", text):
        return _NOTHING
    try:
        value = pyast.literal_eval(text.strip())
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return _NOTHING
    return _jsonable(value)
