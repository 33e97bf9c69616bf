"""Spec: the RL scenario set holds only verified scenarios, self-contained, identical in JSONL and Parquet."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest

from envscaler_core.config import Settings
from envscaler_core.export import RL_SCHEMA, RLRowError, export_run, row_to_records
from envscaler_core.store import Store
from tests.export.consumers import load_with_datasets, read_jsonl
from tests.export.records import Populated
from tests.scenarios.helpers import library_env


def _export(store: Store, populated: Populated, tmp_path: Path) -> Path:
    export_run(store, populated.run_id, Settings(), tmp_path)
    return tmp_path / populated.run_id


def test_only_verified_scenarios_are_in_the_rl_set(store: Store, populated: Populated, tmp_path: Path) -> None:
    rows = read_jsonl(_export(store, populated, tmp_path) / "rl_scenarios.jsonl")
    assert sorted(r["scenario_fp"] for r in rows) == sorted(s.fingerprint for s in populated.scenarios_verified)
    assert populated.scenario_rejected.fingerprint not in {r["scenario_fp"] for r in rows}


def test_jsonl_and_parquet_hold_the_same_rows_under_one_fixed_schema(store: Store, populated: Populated, tmp_path: Path) -> None:
    folder = _export(store, populated, tmp_path)
    table = pq.read_table(folder / "rl_scenarios.parquet")
    assert table.schema.equals(RL_SCHEMA)
    assert table.to_pylist() == read_jsonl(folder / "rl_scenarios.jsonl")


def test_a_row_is_self_contained_env_code_tools_state_task_and_checks(store: Store, populated: Populated, tmp_path: Path) -> None:
    rows = read_jsonl(_export(store, populated, tmp_path) / "rl_scenarios.jsonl")
    stored = {s.fingerprint: s for s in populated.scenarios_verified}
    for i, row in enumerate(rows):
        env, sc = row_to_records(row, f"row {i}")
        original = stored[row["scenario_fp"]]
        assert (sc.task, sc.initial_state, sc.checks, sc.checklist) == (
            original.task, original.initial_state, original.checks, original.checklist)
        assert sc.reference_solution == original.reference_solution
        assert (env.class_name, env.class_code, env.tools) == (library_env().class_name, library_env().class_code, library_env().tools)


def test_datasets_reads_the_parquet_file(store: Store, populated: Populated, tmp_path: Path) -> None:
    ds = load_with_datasets(_export(store, populated, tmp_path) / "rl_scenarios.parquet", tmp_path / "hf")
    assert ds.num_rows == 2 and set(ds.column_names) == set(RL_SCHEMA.names)
    assert ds[0]["checks"][0].keys() == {"item", "code"}


def test_an_edited_row_is_refused_with_its_location(store: Store, populated: Populated, tmp_path: Path) -> None:
    row = read_jsonl(_export(store, populated, tmp_path) / "rl_scenarios.jsonl")[0]
    row["task"] = "Something else entirely."
    with pytest.raises(RLRowError, match="rl.jsonl:7: content does not match scenario_fp"):
        row_to_records(row, "rl.jsonl:7")
    del row["checks"]
    with pytest.raises(RLRowError, match="missing field"):
        row_to_records(row, "rl.jsonl:7")


@pytest.mark.parametrize("edit", ["check", "checklist", "solution", "class_code"])
def test_a_row_whose_checks_solution_or_env_were_edited_is_refused(edit: str, store: Store, populated: Populated,
                                                                      tmp_path: Path) -> None:
    """scenario_fp covers the env id, state and task: a check edited to `return True` (reward 1.0 for doing
    nothing) was loaded as it was; row_sha256 covers every column."""
    row = read_jsonl(_export(store, populated, tmp_path) / "rl_scenarios.jsonl")[0]
    row_to_records(row)  # as exported: fine
    if edit == "check":
        row["checks"][0]["code"] = "def check_func(final_state):\n    return True\n"
    elif edit == "checklist":
        row["checklist"] = [*row["checklist"], "Anything"]
    elif edit == "solution":
        row["reference_solution_json"] = "[]"
    else:
        row["class_code"] += "\n# edited\n"
    with pytest.raises(RLRowError, match="rl.jsonl:3: content does not match row_sha256"):
        row_to_records(row, "rl.jsonl:3")
