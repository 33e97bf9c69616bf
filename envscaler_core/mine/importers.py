"""Stage 1 importers: read task utterances from API-Bank, ToolACE, BFCL and generic JSONL files.

The importer is chosen by content (a JSON list of API-Bank or ToolACE records, or JSON Lines whose
records are BFCL-shaped, ToolACE-shaped or `{"task": ...}`), not by file name, because the BFCL file
ships as `.json` but is JSONL. ToolACE records are ShareGPT-like: `{"system": <prompt holding the tool
list>, "conversations": [{"from": "user", "value": ...}, ...]}`.
Malformed records become `SourceProblem`s naming file and line and are skipped; every other record is
counted as kept, filtered (with the reason) or a duplicate, so nothing disappears unaccounted.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from envscaler_core.mine.filters import filter_reason
from envscaler_core.models.source import SourceTask


class SourceProblem(BaseModel):
    """A record that could not be read: where it is and why."""

    path: str
    line: int = Field(description="1-based line of the record (JSONL) or of the list item's start (JSON).")
    reason: str


class FileCounts(BaseModel):
    """Per-file funnel: raw records read, filtered out, exact duplicates, kept, malformed."""

    dataset: str = ""
    raw: int = 0
    filtered: int = 0
    duplicates: int = 0
    kept: int = 0
    malformed: int = 0
    filter_reasons: dict[str, int] = Field(default_factory=dict)


class ImportResult(BaseModel):
    tasks: list[SourceTask] = Field(default_factory=list)
    problems: list[SourceProblem] = Field(default_factory=list)
    counts: dict[str, FileCounts] = Field(default_factory=dict)


class _Raw(BaseModel):
    """One extracted utterance (or an error) with its 1-based line."""

    line: int
    text: str | None = None
    error: str | None = None


def api_bank_utterance(record_input: str) -> str:
    """Reference extraction: text after the first 'User:', cut before the request/time/AI markers."""
    if "User:" not in record_input:
        raise ValueError("no 'User:' turn in input")
    text = record_input.split("User:", 1)[1]
    for marker in ("\nGenerate API Request: ", "\nAPI-Request: ", "TIME: "):
        text = text.split(marker, 1)[0]
    text = text.strip()
    if "\nAI: " in text:
        text = text.split("\nAI: ", 1)[0]
    return text


def bfcl_utterance(record: dict[str, Any]) -> str:
    """BFCL: the first user turn is question[0][0] and must have role 'user'."""
    try:
        turn = record["question"][0][0]
    except (KeyError, IndexError, TypeError) as exc:
        raise ValueError(f"no question[0][0] ({type(exc).__name__})") from None
    if not isinstance(turn, dict) or turn.get("role") != "user":
        raise ValueError("question[0][0] is not a user turn")
    content = turn.get("content")
    if not isinstance(content, str):
        raise ValueError("question[0][0].content is not a string")
    return content.strip()


USER_ROLES = ("user", "human")  # ToolACE says "user"; ShareGPT exports of it say "human"


def toolace_utterance(record: dict[str, Any]) -> str:
    """ToolACE: the first turn of `conversations` (after any system turns) must be the user's; the
    tool list lives in the `system` text and is not needed for the task."""
    turns = record.get("conversations")
    if not isinstance(turns, list):
        raise ValueError("'conversations' is not a list")
    if "system" in record and not isinstance(record["system"], str):
        raise ValueError("'system' is not a string")
    first = next((t for t in turns if not (isinstance(t, dict) and t.get("from") == "system")), None)
    if not isinstance(first, dict):
        raise ValueError("no turn after the system turns")
    if first.get("from") not in USER_ROLES:
        raise ValueError(f"the first turn is from {first.get('from')!r}, not the user")
    value = first.get("value")
    if not isinstance(value, str):
        raise ValueError("the first user turn's 'value' is not a string")
    return value.strip()


def generic_utterance(record: dict[str, Any]) -> str:
    """Generic JSONL (docs/source_formats.md): `{"task": "<utterance>", "id"?: ...}`."""
    task = record.get("task")
    if not isinstance(task, str):
        raise ValueError("'task' missing or not a string")
    return task.strip()


class NonStandardJSON(ValueError):
    """A record that Python's `json` reads but other JSON readers read differently or refuse."""


def _unique_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """`object_pairs_hook`: json keeps the last of two equal keys without a word, so the task another
    tool reads from the same record could be the other one."""
    seen: set[str] = set()
    for key, _ in pairs:
        if key in seen:
            raise NonStandardJSON(f"duplicate key {key!r} in one object (JSON readers keep only one of them)")
        seen.add(key)
    return dict(pairs)


def _no_constant(name: str) -> Any:
    """`parse_constant`: NaN and (-)Infinity are not JSON; strict readers refuse the whole file."""
    raise NonStandardJSON(f"non-standard JSON constant {name} (not valid JSON)")


STRICT = json.JSONDecoder(object_pairs_hook=_unique_pairs, parse_constant=_no_constant)
"""Decodes one record; a duplicate key or NaN/Infinity raises `NonStandardJSON`."""


def strict_loads(text: str) -> Any:
    return STRICT.decode(text)


def _list_items(text: str) -> Iterator[tuple[int, Any, str | None]]:
    """(1-based line where the item starts, item, why it is not standard JSON or None) for each item of a
    top-level JSON list. The whole list parses leniently first (its shape is the file's), then each item
    strictly, so a duplicate key or NaN is that item's problem and its siblings are still read."""
    lenient = json.JSONDecoder()
    data = json.loads(text)
    pos = text.index("[") + 1
    line, counted_to = 1, 0  # lines counted on from the last item: counting from the top was quadratic
    for item in data:
        while text[pos] in " \t\r\n,":
            pos += 1
        line += text.count("\n", counted_to, pos)
        counted_to = pos
        start = pos
        try:
            _, pos = STRICT.raw_decode(text, pos)
            problem = None
        except NonStandardJSON as exc:
            _, pos = lenient.raw_decode(text, pos)
            problem = str(exc)
        yield line, item, not_utf8(text[start:pos]) or problem


def _list_kind(data: list[Any]) -> str:
    """A list is ToolACE when its first record is ShareGPT-like (has `conversations`), else API-Bank."""
    first = next((item for item in data if isinstance(item, dict)), None)
    return "toolace" if first is not None and "conversations" in first and "input" not in first else "api-bank"


def _list_records(text: str, kind: str) -> Iterator[_Raw]:
    for line, item, problem in _list_items(text):
        if problem is not None:
            yield _Raw(line=line, error=f"invalid JSON: {problem}")
            continue
        if kind == "toolace":
            if not isinstance(item, dict):
                yield _Raw(line=line, error="ToolACE record is not a JSON object")
                continue
            try:
                yield _Raw(line=line, text=toolace_utterance(item))
            except ValueError as exc:
                yield _Raw(line=line, error=f"toolace: {exc}")
            continue
        if not isinstance(item, dict) or not isinstance(item.get("input"), str):
            yield _Raw(line=line, error="API-Bank record without a string 'input'")
            continue
        try:
            yield _Raw(line=line, text=api_bank_utterance(item["input"]))
        except ValueError as exc:
            yield _Raw(line=line, error=f"API-Bank: {exc}")


def unreadable(exc: BaseException) -> str:
    """Why JSON that parses as text cannot become Python values (not a traceback: an outside check
    crashed `run` on one record nested 200,000 levels deep)."""
    if isinstance(exc, RecursionError):
        return "invalid JSON: nested too deeply to read"
    return f"invalid JSON: {exc}"


def _jsonl_records(text: str) -> Iterator[tuple[str, _Raw]]:
    for number, raw_line in enumerate(text.splitlines(), start=1):
        if not raw_line.strip():
            continue
        if (problem := not_utf8(raw_line)) is not None:
            yield "jsonl", _Raw(line=number, error=problem)
            continue
        try:
            record = strict_loads(raw_line)
        except NonStandardJSON as exc:
            yield "jsonl", _Raw(line=number, error=f"invalid JSON: {exc}")
            continue
        except json.JSONDecodeError as exc:
            yield "jsonl", _Raw(line=number, error=f"invalid JSON: {exc.msg} at column {exc.colno}")
            continue
        except (ValueError, RecursionError) as exc:  # an integer of 4,300+ digits; nesting past the stack
            yield "jsonl", _Raw(line=number, error=unreadable(exc))
            continue
        if not isinstance(record, dict):
            yield "jsonl", _Raw(line=number, error="record is not a JSON object")
            continue
        if "question" in record:
            kind, extract = "bfcl", bfcl_utterance
        elif "conversations" in record:
            kind, extract = "toolace", toolace_utterance
        else:
            kind, extract = "jsonl", generic_utterance
        try:
            yield kind, _Raw(line=number, text=extract(record))
        except ValueError as exc:
            yield kind, _Raw(line=number, error=f"{kind}: {exc}")


def not_utf8(record_text: str) -> str | None:
    """Why one record's text is not UTF-8 (the file is decoded with `surrogateescape`, so each byte that
    is not UTF-8 is one U+DC80..U+DCFF character here, which no valid UTF-8 decodes to), or None."""
    bad = _UNDECODED.search(record_text)
    if bad is None:
        return None
    byte = len(record_text[: bad.start()].encode("utf-8", "surrogateescape")) + 1
    return f"not UTF-8 at byte {byte} of the record (0x{ord(bad.group()) - 0xDC00:02X}); {UTF8_ADVICE}"


_UNDECODED = re.compile("[\udc80-\udcff]")
UTF8_ADVICE = "the record is skipped; save the file as UTF-8 to keep it"


def _records(path: Path) -> Iterator[tuple[str, _Raw]]:
    """Pick the importer by content: a top-level JSON list is API-Bank or ToolACE, otherwise JSON Lines.
    A UTF-8 byte order mark (Windows tools write one) is dropped (`utf-8-sig`): it is not data, and kept
    it made a JSON list look like JSON Lines and the first JSON Lines record malformed. A byte that is not
    UTF-8 is that record's problem (`not_utf8`), not the file's: one Latin-1 letter in one record refused
    the whole file, called recordless (rt22-R11 F3). A UTF-16/32 file is refused whole, named as such."""
    from envscaler_core.text_files import wide_encoding, wide_text_advice

    data = path.read_bytes()
    if (encoding := wide_encoding(data[:4])) is not None:
        yield "unknown", _Raw(line=1, error=f"{wide_text_advice(path.name, encoding)}; file skipped")
        return
    text = data.decode("utf-8-sig", errors="surrogateescape")
    if text.lstrip().startswith("["):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            yield "api-bank", _Raw(line=exc.lineno, error=f"invalid JSON list: {exc.msg}")
            return
        except (ValueError, RecursionError) as exc:
            yield "api-bank", _Raw(line=1, error=f"{unreadable(exc)}; file skipped")
            return
        kind = _list_kind(data) if isinstance(data, list) else "api-bank"
        for raw in _list_records(text, kind):
            yield kind, raw
        return
    yield from _jsonl_records(text)


def read_sources(
    paths: Sequence[Path], *, max_tasks: int | None = None, strict_words: bool = False,
    max_task_chars: int | None = None,
) -> ImportResult:
    """Read, filter and exact-dedup tasks from `paths`, in deterministic first-seen order.

    `max_tasks` caps the number of kept tasks (demo slices); reading stops once reached.
    `strict_words` opts into whole-word keyword filters instead of the reference substrings.
    `max_task_chars` (`mine.max_task_chars`): a longer task is malformed, not an utterance: one pasted
    2 MB blob went whole into a judge request beside the good tasks (rt22-R11 F2: 500k prompt tokens).
    """
    result = ImportResult()
    seen: set[str] = set()
    for path in paths:
        path = Path(path)
        counts = result.counts.setdefault(str(path), FileCounts())
        for dataset, raw in _records(path):
            if max_tasks is not None and len(result.tasks) >= max_tasks:
                break
            counts.dataset = counts.dataset or dataset
            if raw.error is None and raw.text and max_task_chars is not None and len(raw.text) > max_task_chars:
                raw = raw.model_copy(update={"error": f"the task is {len(raw.text):,} characters long, over "
                                                      f"mine.max_task_chars={max_task_chars:,} (not one utterance)"})
            if raw.error is not None or not raw.text:
                counts.malformed += 1
                reason = raw.error or "empty task text"
                result.problems.append(SourceProblem(path=str(path), line=raw.line, reason=reason))
                continue
            counts.raw += 1
            reason = filter_reason(raw.text, strict_words=strict_words)
            if reason is not None:
                counts.filtered += 1
                key = reason.split(":", 1)[0]
                counts.filter_reasons[key] = counts.filter_reasons.get(key, 0) + 1
                continue
            if raw.text in seen:
                counts.duplicates += 1
                continue
            seen.add(raw.text)
            counts.kept += 1
            result.tasks.append(SourceTask(text=raw.text, dataset=dataset, origin=f"{path.name}:{raw.line}"))
    return result
