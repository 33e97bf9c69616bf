"""Stage 1 importers: real source files, generic JSONL, malformed records."""

from __future__ import annotations

import json
from pathlib import Path

from envscaler_core.mine import read_sources

DATA = Path(__file__).resolve().parents[3] / "shared" / "data" / "source_tasks"  # ../shared beside the clone
API_BANK = DATA / "api_bank_lv3_train.json"
BFCL = DATA / "bfcl_v3_live_multiple.json"


def test_api_bank_lv3_yields_the_reference_321_unique_tasks() -> None:
    """1245 lv3 records -> 1232 pass the reference filters (13 multimodal) -> 321 unique utterances,
    exactly the reference step0 number: extraction, filters and exact dedup reproduce it."""
    result = read_sources([API_BANK])
    counts = result.counts[str(API_BANK)]
    assert (counts.raw, counts.filtered, len(result.tasks)) == (1245, 13, 321)
    assert counts.duplicates == 1232 - 321
    assert result.problems == []


def test_api_bank_task_is_the_first_user_utterance_with_origin_line() -> None:
    first = read_sources([API_BANK], max_tasks=1).tasks[0]
    assert first.text == "Find a cardiologist in Los Angeles for a check-up appointment."
    assert (first.dataset, first.origin) == ("api-bank", "api_bank_lv3_train.json:2")


def test_bfcl_takes_the_first_user_turn_and_reports_non_user_first_turns() -> None:
    result = read_sources([BFCL])
    assert result.tasks[0].text.startswith("update my latte to a large size")
    assert result.tasks[0].dataset == "bfcl"
    assert all(p.reason == "bfcl: question[0][0] is not a user turn" for p in result.problems)
    counts = result.counts[str(BFCL)]
    assert counts.raw + counts.malformed == 1053 and counts.kept == len(result.tasks)


def test_generic_jsonl_reads_task_field(tmp_path: Path) -> None:
    path = tmp_path / "tasks.jsonl"
    path.write_text('{"task": "Cancel order 42", "id": 1}\n\n{"task": "  Book room 5 for Monday "}\n')
    result = read_sources([path])
    assert [(t.text, t.dataset, t.origin) for t in result.tasks] == [
        ("Cancel order 42", "jsonl", "tasks.jsonl:1"), ("Book room 5 for Monday", "jsonl", "tasks.jsonl:3")]


def test_malformed_records_are_reported_with_file_and_line_and_skipped(tmp_path: Path) -> None:
    path = tmp_path / "mixed.jsonl"
    path.write_text('{"task": "Cancel order 42"}\n{broken\n[1, 2]\n{"id": 7}\n{"task": "Refund order 9"}\n')
    result = read_sources([path])
    assert [t.text for t in result.tasks] == ["Cancel order 42", "Refund order 9"]
    assert [(p.path, p.line) for p in result.problems] == [(str(path), 2), (str(path), 3), (str(path), 4)]
    assert "invalid JSON" in result.problems[0].reason
    assert "'task' missing" in result.problems[2].reason


def test_records_json_cannot_turn_into_values_are_malformed_records_not_a_crash(tmp_path: Path) -> None:
    """A record nested past the interpreter's stack, or an integer of 5,000 digits, parses as text but
    not as values: `run` crashed on the whole file with "unexpected RecursionError" (an outside check)."""
    path = tmp_path / "odd.jsonl"
    path.write_text('{"task": "Cancel order 42"}\n{"task": ' + "[" * 100_000 + "]" * 100_000 + "}\n"
                    '{"task": ' + "9" * 5000 + "}\n")
    result = read_sources([path])
    assert [t.text for t in result.tasks] == ["Cancel order 42"]
    assert [p.line for p in result.problems] == [2, 3]
    assert result.problems[0].reason == "invalid JSON: nested too deeply to read"
    assert result.problems[1].reason.startswith("invalid JSON: Exceeds the limit (4300 digits)")


def test_a_json_list_nested_past_the_stack_is_a_skipped_file(tmp_path: Path) -> None:
    path = tmp_path / "deep.json"
    path.write_text("[" + "[" * 100_000 + "]" * 100_000 + "]")
    result = read_sources([path])
    assert result.tasks == [] and "nested too deeply to read; file skipped" in result.problems[0].reason


def test_api_bank_record_without_user_turn_is_reported_at_its_line(tmp_path: Path) -> None:
    path = tmp_path / "bank.json"
    records = [{"instruction": "", "input": "User: Add a meeting tomorrow.\nGenerate API Request: ", "output": ""},
               {"instruction": "", "input": "no user here", "output": ""}]
    path.write_text(json.dumps(records, indent=1))
    result = read_sources([path])
    assert [t.text for t in result.tasks] == ["Add a meeting tomorrow."]
    assert result.problems[0].line == 7 and "User:" in result.problems[0].reason


def test_exact_duplicates_across_files_keep_first_seen_order(tmp_path: Path) -> None:
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    a.write_text('{"task": "Delete file x"}\n{"task": "Move file y"}\n')
    b.write_text('{"task": "Move file y"}\n{"task": "Archive z"}\n')
    result = read_sources([a, b])
    assert [t.text for t in result.tasks] == ["Delete file x", "Move file y", "Archive z"]
    assert result.counts[str(b)].duplicates == 1


def test_filtered_tasks_are_counted_by_reason(tmp_path: Path) -> None:
    path = tmp_path / "f.jsonl"
    path.write_text('{"task": "Show the photo album"}\n{"task": "Pay 5 USD"}\n{"task": "Caf\\u00e9 booking"}\n')
    counts = read_sources([path]).counts[str(path)]
    assert counts.filter_reasons == {"multimodal": 1, "special-content": 1, "non-english": 1}


def test_max_tasks_caps_the_kept_tasks() -> None:
    assert len(read_sources([API_BANK, BFCL], max_tasks=5).tasks) == 5


def test_a_record_that_is_not_utf8_is_reported_not_crashed(tmp_path: Path) -> None:
    path = tmp_path / "latin1.jsonl"
    path.write_bytes(b'{"task": "ok"}\n{"task": "caf\xe9"}\n')
    result = read_sources([path])
    assert [t.text for t in result.tasks] == ["ok"] and result.problems[0].line == 2
    assert "not UTF-8" in result.problems[0].reason
