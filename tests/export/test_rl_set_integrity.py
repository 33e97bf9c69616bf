"""Spec: `load_rl_set` loads an RL export only as it was written (red team 9, F2). With the export's
`manifest.json` beside the file (or given), a file whose row count or sha256 differs from it is refused,
naming the file and what differs: a file cut at a line end loaded 3 of 10 rows without a word. An empty
file and a repeated row (sampled twice as often) are refused always, the repeat naming its lines."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from envscaler_core.config import Settings
from envscaler_core.export import RLRowError, export_run
from envscaler_core.gym import load_rl_set
from envscaler_core.store import Store
from tests.export.records import Populated


@pytest.fixture
def exported(store: Store, populated: Populated, tmp_path: Path) -> Path:
    """The directory of a real RL export (two verified scenarios of one env), with its manifest."""
    export_run(store, populated.run_id, Settings(), tmp_path, formats=["rl"])
    return tmp_path / populated.run_id


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines(keepends=True)


def test_a_file_cut_at_a_line_end_is_refused_by_its_manifest(exported: Path, runtime: Any) -> None:
    path = exported / "rl_scenarios.jsonl"
    path.write_text(_lines(path)[0], encoding="utf-8")
    with pytest.raises(RLRowError, match=r"rl_scenarios\.jsonl: 1 rows?, manifest\.json says 2"):
        load_rl_set(path, runtime)


def test_a_file_with_its_rows_reordered_is_refused_by_its_digest(exported: Path, runtime: Any) -> None:
    path = exported / "rl_scenarios.jsonl"
    path.write_text("".join(reversed(_lines(path))), encoding="utf-8")
    with pytest.raises(RLRowError, match=r"rl_scenarios\.jsonl: sha256 .* differs from manifest\.json"):
        load_rl_set(path, runtime)


def test_a_parquet_file_is_checked_against_the_manifest_too(exported: Path, runtime: Any) -> None:
    import pyarrow.parquet as pq

    path = exported / "rl_scenarios.parquet"
    pq.write_table(pq.read_table(path).slice(0, 1), path)
    with pytest.raises(RLRowError, match=r"rl_scenarios\.parquet: 1 rows?, manifest\.json says 2"):
        load_rl_set(path, runtime)


def test_a_manifest_given_is_checked_wherever_the_file_is(exported: Path, tmp_path: Path, runtime: Any) -> None:
    copy = tmp_path / "elsewhere" / "train.jsonl"
    copy.parent.mkdir()
    copy.write_text(_lines(exported / "rl_scenarios.jsonl")[1], encoding="utf-8")
    with pytest.raises(RLRowError, match=r"train\.jsonl: 1 rows?, manifest\.json says 2"):
        load_rl_set(copy, runtime, manifest=exported / "manifest.json")


def test_an_intact_export_loads_with_its_manifest(exported: Path, runtime: Any) -> None:
    for name in ("rl_scenarios.jsonl", "rl_scenarios.parquet"):
        (gym,) = load_rl_set(exported / name, runtime, manifest=exported / "manifest.json")
        assert len(gym.scenarios) == 2


def test_an_empty_file_is_refused(tmp_path: Path, runtime: Any) -> None:
    path = tmp_path / "rl_scenarios.jsonl"
    path.write_text("", encoding="utf-8")
    with pytest.raises(RLRowError, match=r"rl_scenarios\.jsonl: no rows"):
        load_rl_set(path, runtime)


def test_a_repeated_row_is_refused_naming_its_lines(exported: Path, tmp_path: Path, runtime: Any) -> None:
    alone = tmp_path / "alone"  # no manifest beside it: the repeat alone is refused
    alone.mkdir()
    path = alone / "rl_scenarios.jsonl"
    first, second = _lines(exported / "rl_scenarios.jsonl")
    path.write_text(first + second + first, encoding="utf-8")
    with pytest.raises(RLRowError, match=r"rl_scenarios\.jsonl: lines 1 and 3 hold the same row"):
        load_rl_set(path, runtime)


def test_a_copy_without_a_manifest_still_loads(exported: Path, tmp_path: Path, runtime: Any) -> None:
    copy = tmp_path / "alone.parquet"
    shutil.copy(exported / "rl_scenarios.parquet", copy)
    (gym,) = load_rl_set(copy, runtime)
    assert len(gym.scenarios) == 2


def test_a_cut_parquet_file_beside_its_manifest_is_refused_by_its_sha256(exported: Path, runtime: Any) -> None:
    """rt10-A F5: pyarrow's ArrowInvalid escaped, though the manifest beside it says the file is not the export's."""
    path = exported / "rl_scenarios.parquet"
    path.write_bytes(path.read_bytes()[:1000])
    with pytest.raises(RLRowError, match=r"rl_scenarios\.parquet: sha256 .* differs from manifest\.json"):
        load_rl_set(path, runtime)


def test_an_unreadable_parquet_copy_is_one_error_naming_it(exported: Path, tmp_path: Path, runtime: Any) -> None:
    copy = tmp_path / "cut.parquet"
    copy.write_bytes((exported / "rl_scenarios.parquet").read_bytes()[:1000])
    with pytest.raises(RLRowError, match=r"cut\.parquet: not a readable Parquet file"):
        load_rl_set(copy, runtime)


def test_a_jsonl_line_that_is_not_utf8_is_one_error_naming_file_and_line(exported: Path, tmp_path: Path,
                                                                        runtime: Any) -> None:
    data = (exported / "rl_scenarios.jsonl").read_bytes()
    copy = tmp_path / "bad.jsonl"
    copy.write_bytes(data[:200] + b"\xff" + data[201:])
    with pytest.raises(RLRowError, match=r"bad\.jsonl:1: not UTF-8"):
        load_rl_set(copy, runtime)
    beside = exported / "rl_scenarios.jsonl"
    beside.write_bytes(data[:200] + b"\xff" + data[201:])
    with pytest.raises(RLRowError, match=r"rl_scenarios\.jsonl: sha256 .* differs from manifest\.json"):
        load_rl_set(beside, runtime)


@pytest.mark.parametrize(("line", "why"), [
    ("[" * 100_000 + "]" * 100_000, r"deep\.jsonl:2: nested too deeply to read"),
    ('{"a":' * 100_000 + "1" + "}" * 100_000, r"deep\.jsonl:2: nested too deeply to read"),
    ('{"a": ' + "9" * 5000 + "}", r"deep\.jsonl:2: an integer of more than 4300 digits"),
])
def test_a_jsonl_line_too_deep_or_with_too_long_an_integer_is_one_error_naming_file_and_line(
        exported: Path, tmp_path: Path, runtime: Any, line: str, why: str) -> None:
    """rt17-B F3: a line nested 100,000 deep let a bare RecursionError escape (no file, no line), and a
    5,000-digit integer was called 'not a readable Parquet file' with no line."""
    copy = tmp_path / "deep.jsonl"
    copy.write_text(_lines(exported / "rl_scenarios.jsonl")[0] + line + "\n", encoding="utf-8")
    with pytest.raises(RLRowError, match=why):
        load_rl_set(copy, runtime)


@pytest.mark.parametrize("column", ["tools_json", "tool_kinds_json", "initial_state_json", "reference_solution_json"])
def test_a_json_column_nested_too_deeply_is_one_error_naming_file_line_and_column(
        exported: Path, tmp_path: Path, runtime: Any, column: str) -> None:
    """rt17-B F3: a row whose `tools_json` held a list nested 100,000 deep let a bare RecursionError escape."""
    import json

    row = json.loads(_lines(exported / "rl_scenarios.jsonl")[0])
    copy = tmp_path / "deep.jsonl"
    copy.write_text(json.dumps({**row, column: "[" * 100_000 + "]" * 100_000}) + "\n", encoding="utf-8")
    with pytest.raises(RLRowError, match=rf"deep\.jsonl:1: {column}: nested too deeply to read"):
        load_rl_set(copy, runtime)
