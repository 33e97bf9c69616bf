"""Spec: what is wrong with one source record stays that record's problem. A record holding a byte that is
not UTF-8 is malformed (`file:line`, the byte), the file's other records are read (rt22-R11 F3: one Latin-1
letter refused the whole file as recordless); a file no record of which decodes is refused naming the
encoding. A task longer than `mine.max_task_chars` is malformed with its length, not sent to the judge
(rt22-R11 F2: one pasted 2 MB blob went whole into a judge request beside the good tasks)."""

from __future__ import annotations

import json
from pathlib import Path

from envscaler_core.config import load_settings
from envscaler_core.mine import read_sources
from envscaler_core.mine.source_report import inspect_sources, report_lines, source_errors

SLICE = Path(__file__).resolve().parents[2] / "envscaler_core" / "data" / "api_bank_lv3_slice.json"


def _tasks(n: int) -> list[bytes]:
    return [json.dumps({"task": f"Cancel my order {i} and refund it to my card ending 42{i}."}).encode() for i in range(n)]


def test_a_record_with_a_latin1_byte_is_malformed_and_the_others_are_read(tmp_path: Path) -> None:
    lines = _tasks(10)
    lines[5] = b'{"task":"Caf\xe9 order 55: cancel it please and refund it."}'
    path = tmp_path / "tasks10.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    result = read_sources([path])
    assert len(result.tasks) == 9
    assert [(p.line, p.reason.split(";")[0]) for p in result.problems] == [(6, "not UTF-8 at byte 13 of the record (0xE9)")]
    report = inspect_sources([path])
    assert source_errors(report) == []
    assert "tasks10.jsonl  jsonl    10 records: 9 kept, 0 duplicate, 0 filtered, 1 malformed" in report_lines(report)[0]


def test_an_item_of_a_json_list_with_a_latin1_byte_is_malformed_and_the_others_are_read(tmp_path: Path) -> None:
    items = json.loads(SLICE.read_text(encoding="utf-8"))[:3]
    text = json.dumps(items, indent=1).encode()
    second = text.index(b"User:", text.index(b"User:") + 1)
    path = tmp_path / "api_bank.json"
    path.write_bytes(text[:second] + b"\xe9" + text[second:])
    result = read_sources([path])
    assert result.counts[str(path)].malformed == 1 and result.counts[str(path)].raw + 1 == 3
    assert "not UTF-8 at byte" in result.problems[0].reason


def test_a_file_no_record_of_which_is_utf8_is_refused_naming_the_encoding(tmp_path: Path) -> None:
    path = tmp_path / "latin1.jsonl"
    path.write_bytes("".join(json.dumps({"task": f"Caf\u00e9 order {i}: cancel it."}, ensure_ascii=False) + "\n"
                             for i in range(3)).encode("latin-1"))
    errors = source_errors(inspect_sources([path]))
    assert len(errors) == 1 and "it is not UTF-8 text" in errors[0] and "iconv" in errors[0]
    assert "no string 'task'" not in errors[0]


def test_a_task_over_max_task_chars_is_malformed_with_its_length_and_the_others_kept(tmp_path: Path) -> None:
    lines = [json.dumps({"task": "Cancel my order 77 and refund it. " + "QUJD" * 5_000})] + [l.decode() for l in _tasks(3)]
    path = tmp_path / "big.jsonl"
    path.write_text("\n".join(lines) + "\n")
    result = read_sources([path], max_task_chars=10_000)
    assert len(result.tasks) == 3 and result.counts[str(path)].malformed == 1
    (problem,) = result.problems
    assert problem.line == 1 and "20,034 characters" in problem.reason and "mine.max_task_chars=10,000" in problem.reason


def test_the_run_reads_sources_with_the_configured_task_length_cap(tmp_path: Path) -> None:
    path = tmp_path / "big.jsonl"
    path.write_text(json.dumps({"task": "x " * 10_000}) + "\n" + _tasks(1)[0].decode() + "\n")
    report = inspect_sources([path], max_task_chars=load_settings(environ={}).mine.max_task_chars)
    assert (report.files[0].kept, report.files[0].malformed) == (1, 1)


def test_the_default_cap_leaves_ample_room_over_the_bundled_real_tasks() -> None:
    longest = max(len(t.text) for t in read_sources([SLICE]).tasks)
    assert longest * 50 < load_settings(environ={}).mine.max_task_chars
