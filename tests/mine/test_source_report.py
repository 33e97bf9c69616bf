"""Spec: every source file is accounted for, and a file no task can come from is named with the reason."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from envscaler_core.mine.source_report import inspect_sources, report_lines, source_errors

GOOD = '{"task": "Book a table for two at 7pm tomorrow at Luigi\'s."}\n'


def write(tmp_path: Path, name: str, text: str | bytes) -> str:
    path = tmp_path / name
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return str(path)


@pytest.mark.parametrize(("name", "text", "needle"), [
    ("tasks.csv", "id,task\n1,Book a flight to Rome\n2,Cancel my order\n", "looks like CSV"),
    ("tasks.tsv", "id\ttask\n1\tBook a flight\n", "looks like TSV"),
    ("tasks.xml", '<?xml version="1.0"?>\n<tasks><task>Book</task></tasks>\n', "looks like XML"),
    ("page.html", "<!DOCTYPE html><html><body>x</body></html>", "looks like HTML"),
    ("empty.jsonl", "", "the file is empty"),
    ("blank.jsonl", "\n\n   \n", "the file is empty"),
    ("empty.json", "[]", "an empty JSON list"),
    ("broken.json", '[{"input": "User: hi"},\n{"input": "User: bo', "a JSON list that does not parse"),
    ("toolace.json", json.dumps([{"system": "s", "conversations": [{"from": "assistant", "value": "Hello"}]}]),
     "first item's keys: conversations, system"),
    ("notask.jsonl", '{"text": "Book a hotel"}\n{"prompt": "x"}\n', "no string 'task'"),
    ("nonstring.jsonl", '{"task": 5}\n{"task": ["a"]}\n', "'task' missing or not a string"),
    ("blanktask.jsonl", '{"task": "   "}\n{"task": ""}\n', "whose 'task' is blank"),
    ("object.json", '{\n  "task": "Book a hotel"\n}\n', "one JSON object"),
    ("data.parquet", b"PAR1\x00\x01binary", "Parquet"),
    ("blob.bin", b"\x00\x01\x02\x03binary", "binary"),
])
def test_a_file_that_yields_no_task_is_fatal_with_its_reason(tmp_path: Path, name: str, text: str | bytes,
                                                            needle: str) -> None:
    path = write(tmp_path, name, text)
    errors = source_errors(inspect_sources([path]))
    assert len(errors) == 1, errors
    assert errors[0].startswith(f"source {path} yields no task: ") and needle in errors[0], errors[0]


def test_a_file_of_only_duplicates_is_fatal_and_says_so(tmp_path: Path) -> None:
    first, second = write(tmp_path, "a.jsonl", GOOD), write(tmp_path, "b.jsonl", GOOD)
    errors = source_errors(inspect_sources([first, second]))
    assert errors == [f"source {second} yields no task: all 1 records were dropped: 1 duplicates of earlier tasks"]


def test_counts_and_first_problems_name_file_and_line(tmp_path: Path) -> None:
    path = write(tmp_path, "mixed.jsonl", GOOD + '{"task": 5}\nnot json\n' + '{"task": "Bonjour, je voudrais réserver une chambre d\'hôtel à Paris pour demain soir s\'il vous plaît"}\n')
    report = inspect_sources([path])
    entry = report.files[0]
    assert (entry.records, entry.kept, entry.malformed, entry.filtered) == (4, 1, 2, 1)
    assert entry.problems[0].startswith("mixed.jsonl:2: ") and entry.problems[1].startswith("mixed.jsonl:3: invalid JSON")
    text = "\n".join(report_lines(report))
    assert "4 records: 1 kept, 0 duplicate, 1 filtered (non-english 1), 2 malformed" in text
    assert source_errors(report) == []  # usable: malformed records are skipped and reported...


def test_strict_turns_any_malformed_record_into_an_error(tmp_path: Path) -> None:
    path = write(tmp_path, "mixed.jsonl", GOOD + "not json\n")
    errors = source_errors(inspect_sources([path]), strict=True)
    assert len(errors) == 1 and "1 malformed record(s) and --strict is set" in errors[0] and "mixed.jsonl:2:" in errors[0]


def test_the_cap_is_reported_not_blamed(tmp_path: Path) -> None:
    lines = "".join(json.dumps({"task": f"Book table number {i} at the harbour restaurant"}) + "\n" for i in range(5))
    report = inspect_sources([write(tmp_path, "t.jsonl", lines)], max_tasks=2)
    assert source_errors(report) == []
    assert "mine.max_tasks=2: the run takes the first 2 of 5 kept tasks" in report_lines(report)[-1]
