"""Spec: a source record JSON readers would read silently wrong is that record's problem, at file:line.

Python's `json` keeps the last of two equal keys and reads NaN/Infinity (not JSON); either would turn
into a task other tools read differently, so such a record is malformed, named by its line and by the
key or constant. A UTF-8 byte order mark (Windows tools write one) is not part of the data: the file
reads as if it were absent."""

from __future__ import annotations

import json
from pathlib import Path

from envscaler_core.mine import read_sources

GOOD = "Cancel my order 58291 and refund it to the original card."


def _lines(path: Path, *lines: str) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_a_jsonl_record_naming_a_key_twice_is_malformed_at_its_line(tmp_path: Path) -> None:
    src = _lines(tmp_path / "t.jsonl", json.dumps({"task": GOOD}),
                 '{"task": "Book a table for two tonight.", "task": "Delete every user account."}')
    result = read_sources([src])
    assert [t.text for t in result.tasks] == [GOOD]
    (problem,) = result.problems
    assert (problem.line, result.counts[str(src)].malformed) == (2, 1)
    assert "duplicate key 'task'" in problem.reason


def test_a_jsonl_record_holding_nan_or_infinity_is_malformed_naming_the_constant(tmp_path: Path) -> None:
    src = _lines(tmp_path / "t.jsonl", '{"task": "Book a table for two tonight.", "score": NaN}',
                 json.dumps({"task": GOOD}), '{"task": "Pay the rent now.", "limit": -Infinity}')
    result = read_sources([src])
    assert [t.text for t in result.tasks] == [GOOD]
    assert [(p.line, "NaN" in p.reason, "-Infinity" in p.reason) for p in result.problems] == [
        (1, True, False), (3, False, True)]
    assert all("non-standard JSON constant" in p.reason for p in result.problems)


def test_a_json_list_item_naming_a_key_twice_is_malformed_at_its_line_and_its_siblings_are_read(tmp_path: Path) -> None:
    src = tmp_path / "bank.json"
    src.write_text('[\n  {"input": "User: ' + GOOD + '"},\n'
                   '  {"input": "User: Book a table for two tonight.", "input": "User: Pay the rent now."}\n]\n',
                   encoding="utf-8")
    result = read_sources([src])
    assert [t.text for t in result.tasks] == [GOOD]
    (problem,) = result.problems
    assert problem.line == 3 and "duplicate key 'input'" in problem.reason


def test_a_json_list_item_holding_infinity_is_malformed_at_its_line(tmp_path: Path) -> None:
    src = tmp_path / "bank.json"
    src.write_text('[{"input": "User: ' + GOOD + '"},\n {"input": "User: Pay the rent now.", "n": Infinity}]',
                   encoding="utf-8")
    result = read_sources([src])
    assert [t.text for t in result.tasks] == [GOOD]
    (problem,) = result.problems
    assert problem.line == 2 and "non-standard JSON constant Infinity" in problem.reason


def test_a_jsonl_file_with_a_byte_order_mark_reads_its_first_record(tmp_path: Path) -> None:
    src = tmp_path / "t.jsonl"
    src.write_bytes(b"\xef\xbb\xbf" + (json.dumps({"task": GOOD}) + "\n").encode())
    result = read_sources([src])
    assert [(t.text, t.origin) for t in result.tasks] == [(GOOD, "t.jsonl:1")] and result.problems == []


def test_a_json_list_with_a_byte_order_mark_is_read_as_a_list(tmp_path: Path) -> None:
    src = tmp_path / "bank.json"
    src.write_bytes(b"\xef\xbb\xbf" + json.dumps([{"input": f"User: {GOOD}"}]).encode())
    result = read_sources([src])
    assert [(t.text, t.dataset) for t in result.tasks] == [(GOOD, "api-bank")] and result.problems == []
