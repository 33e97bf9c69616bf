"""Turning what the importers found into a per-file report people read, and into the verdicts that stop
a run before anything is written: a file that yields no task, a format we do not read, an empty run,
or (with `strict`) any malformed record.

This module never decides how a file is parsed: `importers.read_sources` does (by content). It only
reads the counts and problems that come back, and, for a file none of whose records could be read,
sniffs its first bytes to name what it looks like (CSV, XML, ...) so the message says why.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from envscaler_core.mine.importers import ImportResult, read_sources
from envscaler_core.models.base import file_sha256
from envscaler_core.models.source_report import SourceFileReport, SourceReport
from envscaler_core.shell import shell_word

FIRST_PROBLEMS = 5
SUPPORTED = "formats read: see docs/source_formats.md"


def build_source_report(paths: Sequence[Path | str], result: ImportResult, max_tasks: int | None = None) -> SourceReport:
    """One `SourceFileReport` per path, in the order given, with verdicts for unusable files."""
    capped = max_tasks is not None and len(result.tasks) >= max_tasks
    files = []
    for path in paths:
        key = str(Path(path))
        counts = result.counts.get(key)
        problems = [f"{Path(p.path).name}:{p.line}: {p.reason}" for p in result.problems if p.path == key]
        entry = SourceFileReport(path=key)
        if counts is not None:
            entry = SourceFileReport(
                path=key, dataset=counts.dataset, records=counts.raw + counts.malformed, kept=counts.kept,
                duplicates=counts.duplicates, filtered=counts.filtered, filter_reasons=dict(counts.filter_reasons),
                malformed=counts.malformed, problems=problems[:FIRST_PROBLEMS])
        entry.sha256 = file_digest(path)
        if capped and entry.records == 0:
            entry = entry.model_copy(update={"not_read": True})
        elif entry.kept == 0:
            entry = entry.model_copy(update={"fatal": _why_no_task(Path(path), entry)})
        files.append(entry)
    return SourceReport(files=files, max_tasks=max_tasks)


def file_digest(path: Path | str) -> str | None:
    """sha256 of the file's bytes, None when it cannot be read (the reader reports why)."""
    try:
        return file_sha256(path)
    except OSError:
        return None


def changed_sources(before: SourceReport | None, now: SourceReport) -> list[str]:
    """One line per file whose contents differ from what the run read before under the same path: a
    resume on them would mix two datasets in one run (topics selected from the old records, new
    candidates from the new ones), which an outside check saw happen without a word."""
    if before is None:
        return []
    old = {f.path: f for f in before.files if f.sha256}
    lines = []
    for entry in now.files:
        was = old.get(entry.path)
        if was is not None and entry.sha256 and entry.sha256 != was.sha256:
            lines.append(f"{entry.path} changed since this run first read it ({was.records} records, sha256 "
                         f"{was.sha256[:12]}; now {entry.records} records, sha256 {entry.sha256[:12]})")
    return lines


def inspect_sources(paths: Sequence[Path | str], max_tasks: int | None = None,
                    max_task_chars: int | None = None) -> SourceReport:
    """Read every file whole (the cap is noted, not applied, so each file is judged on all its records);
    a task over `max_task_chars` is malformed here as in the run, so the report printed first agrees."""
    result = read_sources([Path(p) for p in paths], max_task_chars=max_task_chars)
    report = build_source_report(paths, result)
    return report.model_copy(update={"max_tasks": max_tasks})


def reading_order(earlier: SourceReport | None, paths: Sequence[Path | str]) -> list[str]:
    """The files a run reads, in the order duplicates are judged: those it read before (its stored report)
    first, then the ones given now that are new to it. A file added with `--add-sources` read alone
    counted the tasks the run already had as "kept" (an outside check: "7 kept, 0 duplicate" for a file
    holding the run's 7 tasks again)."""
    before = [f.path for f in earlier.files] if earlier is not None else []
    given = [str(p) for p in paths]
    return list(dict.fromkeys(before + given))


def source_errors(report: SourceReport, *, strict: bool = False) -> list[str]:
    """One line per reason the run must not start; empty when it may."""
    errors = [f"source {f.path} yields no task: {f.fatal}" for f in report.files if f.fatal]
    if strict:
        errors += [f"source {f.path} has {f.malformed} malformed record(s) and --strict is set; first: {f.problems[0]}"
                   for f in report.files if f.malformed and not f.fatal and f.problems]
    if not errors and report.files and report.kept == 0:
        errors.append("the sources yield no task at all")
    return errors


def report_lines(report: SourceReport) -> list[str]:
    """The per-file counts and first problems, as printed at the start of a run and by `status`."""
    width = max((len(Path(f.path).name) for f in report.files), default=0)
    lines = []
    for f in report.files:
        name = Path(f.path).name.ljust(width)
        if f.not_read:
            lines.append(f"  {name}  not read: mine.max_tasks={report.max_tasks} was reached before it")
            continue
        filtered = f"{f.filtered} filtered" + (
            " (" + ", ".join(f"{k} {v}" for k, v in sorted(f.filter_reasons.items())) + ")" if f.filter_reasons else "")
        lines.append(f"  {name}  {f.dataset or '?':<8} {f.records} records: {f.kept} kept, {f.duplicates} duplicate, "
                     f"{filtered}, {f.malformed} malformed")
        lines += [f"    {p}" for p in f.problems]
        if f.malformed > len(f.problems):
            lines.append(f"    ... and {f.malformed - len(f.problems)} more malformed")
    if report.max_tasks is not None and report.kept > report.max_tasks:
        lines.append(f"  mine.max_tasks={report.max_tasks}: the run takes the first {report.max_tasks} "
                     f"of {report.kept} kept tasks")
    return lines


def _why_no_task(path: Path, entry: SourceFileReport) -> str:
    if entry.records == 0 and entry.malformed == 0:
        looks = guess_format(path)
        return f"the file is empty ({looks})" if looks and looks != "empty" else "the file is empty"
    if entry.malformed == entry.records:
        from envscaler_core.text_files import wide_encoding, wide_text_advice

        try:
            encoding = wide_encoding(path.read_bytes()[:4])
        except OSError:
            encoding = None
        if encoding is not None:
            return f"it is {wide_text_advice(path, encoding)} ({SUPPORTED})"
        if entry.problems and all(": not UTF-8 at byte" in p for p in entry.problems):
            return (f"it is not UTF-8 text: no record of it decodes as UTF-8 (first problem: "
                    f"{entry.problems[0].split('; ')[0]}); convert it, e.g. `iconv -f CP1252 -t UTF-8 "
                    f"{shell_word(path)} > {shell_word('utf8.' + path.name)}` for Windows-1252 ({SUPPORTED})")
        looks = guess_format(path)
        head = f"it looks like {looks}" if looks else "none of its records could be read"
        # a file recognised as EnvScaler's metadata is valid JSON: the line reader's complaint about its first
        # line ("invalid JSON") is not its problem (interop re-check, F6d)
        first = f"; first problem: {entry.problems[0]}" if entry.problems and not _is_envscaler(looks) else ""
        return f"{head}{first} ({SUPPORTED})"
    parts = [f"{n} {what}" for n, what in ((entry.filtered, "filtered"), (entry.duplicates, "duplicates of earlier tasks"),
                                           (entry.malformed, "malformed")) if n]
    reasons = ", ".join(f"{k} {v}" for k, v in sorted(entry.filter_reasons.items()))
    return f"all {entry.records} records were dropped: " + ", ".join(parts) + (f" (filters: {reasons})" if reasons else "")


def _is_envscaler(looks: str | None) -> bool:
    return bool(looks) and looks.startswith("EnvScaler's")


def guess_format(path: Path) -> str | None:
    """A name for what an unreadable file looks like, from its first bytes; None if nothing obvious."""
    try:
        head = path.read_bytes()[:65536]
    except OSError:
        return None
    if not head.strip():
        return "empty"
    if head.startswith(b"PAR1"):
        return "Parquet (convert it to JSON Lines)"
    if head[:4] in (b"PK\x03\x04",) or head[:2] == b"\x1f\x8b":
        return "a compressed archive (unpack it first)"
    from envscaler_core.text_files import wide_encoding

    if (encoding := wide_encoding(head[:4])) is not None:
        return f"{encoding} text, not UTF-8"
    if b"\x00" in head[:1024]:
        return "a binary file"
    text = head.decode("utf-8", errors="replace").lstrip("\ufeff").lstrip()
    first = text.splitlines()[0] if text else ""
    if text.startswith("<"):
        return "HTML" if text[:200].lower().startswith(("<!doctype html", "<html")) else "XML"
    if text.startswith("{"):
        return _json_object_shape(path, first)
    if text.startswith("["):
        return _json_list_shape(path)
    if first.count(",") >= 1 and "{" not in first:
        return "CSV"
    if "\t" in first and "{" not in first:
        return "TSV"
    if ":" in first and not first.startswith(("{", "[")):
        return "YAML or plain text"
    return "plain text"


def _keys(record: object) -> str:
    return ", ".join(sorted(record)[:6]) if isinstance(record, dict) else type(record).__name__


ENVSCALER_ADVICE = ("import it with `envscaler import envscaler --envs ENV_METADATA --scenarios SCENARIO_FILES "
                    "--run-id ID`, then roll the import out with `envscaler run --run-id ID --stages rollout,export` "
                    "(no -s; docs/interop.md)")


def envscaler_shape(data: object) -> str | None:
    """EnvScaler's own metadata files, which hold no task for `run` to read: its env metadata (a dict of env
    records, outside check round 4, F4: `run -s` took one without a word when the mine stage was not asked
    for) or a scenario file (a list of records with `env_id`, `init_config` and `task`)."""
    envs = [v for v in data.values() if isinstance(v, dict) and "env_class_code" in v] if isinstance(data, dict) else []
    if envs:  # some records may be malformed: the import reports those
        return f"EnvScaler's env metadata ({len(envs)} env record(s), no tasks): {ENVSCALER_ADVICE}"
    first = data[0] if isinstance(data, list) and data else None
    if isinstance(first, dict) and {"env_id", "init_config", "task"} <= set(first):
        return f"EnvScaler's scenario metadata: {ENVSCALER_ADVICE}"
    return None


def _json_object_shape(path: Path, first_line: str) -> str:
    try:
        record = json.loads(first_line)
    except (ValueError, RecursionError):
        record = None
    if (envscaler := envscaler_shape(record)) is not None:
        return envscaler
    if isinstance(record, dict) and isinstance(record.get("task"), str) and not record["task"].strip():
        return "JSON Lines whose 'task' is blank (the first record's 'task' holds only whitespace or nothing)"
    if isinstance(record, dict):
        return ("JSON Lines whose records have no string 'task', no BFCL 'question' and no ToolACE 'conversations' "
                f"(first record's keys: {_keys(record)})")
    try:
        whole = json.loads(path.read_text(encoding="utf-8-sig"))
    except (ValueError, RecursionError, OSError):
        return "JSON that does not parse"
    if (envscaler := envscaler_shape(whole)) is not None:
        return envscaler
    return "one JSON object (wrap the records in a list, or write one object per line)" if isinstance(whole, dict) \
        else "JSON of an unexpected shape"


def _json_list_shape(path: Path) -> str:
    try:
        whole = json.loads(path.read_text(encoding="utf-8-sig"))
    except (ValueError, RecursionError, OSError):
        return "a JSON list that does not parse"
    if not whole:
        return "an empty JSON list"
    if (envscaler := envscaler_shape(whole)) is not None:
        return envscaler
    return ("a JSON list whose items are neither API-Bank records with an 'input' string nor ToolACE dialogues whose "
            f"'conversations' open with a user turn (first item's keys: {_keys(whole[0])})")
