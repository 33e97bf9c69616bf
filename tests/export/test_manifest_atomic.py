"""Spec: envs.jsonl and manifest.json; unknown runs; atomic files (a failing writer leaves nothing half-written)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlalchemy import insert

from envscaler_core.config import Settings
from envscaler_core.export import EXPORT_SCHEMA_VERSION, UnknownRunError, export_run
from envscaler_core.export.atomic import atomic_output, sha256_file
from envscaler_core.models import AcceptedEnv, Scenario, Trajectory
from envscaler_core.store import Store, StoreError
from envscaler_core.store.schema import kind_of
from tests.export.consumers import read_jsonl
from tests.export.records import Populated
from tests.scenarios.helpers import LENT_B1, STATE, library_env


def test_envs_file_holds_the_runs_accepted_envs(store: Store, populated: Populated, tmp_path: Path) -> None:
    export_run(store, populated.run_id, Settings(), tmp_path)
    (row,) = read_jsonl(tmp_path / populated.run_id / "envs.jsonl")
    assert row["fingerprint"] == library_env().fingerprint and row["class_code"] == library_env().class_code


def test_manifest_counts_and_hashes_every_file(store: Store, populated: Populated, tmp_path: Path) -> None:
    returned = export_run(store, populated.run_id, Settings(), tmp_path)
    folder = tmp_path / populated.run_id
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["schema_version"] == EXPORT_SCHEMA_VERSION and manifest["run_id"] == populated.run_id
    assert manifest["counts"] == returned.counts.model_dump()
    assert manifest["counts"]["rl_rows"] == 2 and manifest["counts"]["trajectories"] == 4
    expected = {"envs.jsonl", "sft_messages.jsonl", "sft_messages_meta.jsonl", "sft_hf.jsonl",
                "llamafactory_sharegpt.jsonl", "dataset_info.json", "rl_scenarios.jsonl", "rl_scenarios.parquet"}
    assert set(manifest["files"]) == expected
    for name, entry in manifest["files"].items():
        assert entry["sha256"] == sha256_file(folder / name) and entry["bytes"] == (folder / name).stat().st_size


def test_exports_are_deterministic(store: Store, populated: Populated, tmp_path: Path) -> None:
    first = export_run(store, populated.run_id, Settings(), tmp_path / "a")
    second = export_run(store, populated.run_id, Settings(), tmp_path / "b")
    assert {n: f.sha256 for n, f in first.files.items()} == {n: f.sha256 for n, f in second.files.items()}


def test_a_format_subset_writes_only_those_files(store: Store, populated: Populated, tmp_path: Path) -> None:
    manifest = export_run(store, populated.run_id, Settings(), tmp_path, formats=["rl"])
    assert manifest.formats == ["rl"]
    assert set(manifest.files) == {"envs.jsonl", "rl_scenarios.jsonl", "rl_scenarios.parquet"}
    assert not (tmp_path / populated.run_id / "sft_messages.jsonl").exists()


def test_default_location_is_flow_out_dir_slash_run_id(store: Store, populated: Populated, tmp_path: Path) -> None:
    settings = Settings.model_validate({"flow": {"out_dir": str(tmp_path / "exports")}})
    manifest = export_run(store, populated.run_id, settings)
    assert Path(manifest.out_dir) == tmp_path / "exports" / populated.run_id
    assert (tmp_path / "exports" / populated.run_id / "manifest.json").is_file()


def test_an_unknown_run_is_an_error_and_writes_nothing(store: Store, populated: Populated, tmp_path: Path) -> None:
    with pytest.raises(UnknownRunError, match=f"unknown run 'nope'.*known runs: {populated.run_id}"):
        export_run(store, "nope", Settings(), tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_a_failing_writer_leaves_no_partial_file_and_keeps_the_old_one(tmp_path: Path) -> None:
    target = tmp_path / "data.jsonl"
    target.write_bytes(b"old\n")
    with pytest.raises(RuntimeError, match="boom"):
        with atomic_output(target) as fh:
            fh.write(b"new line 1\n")
            raise RuntimeError("boom")
    assert target.read_bytes() == b"old\n"
    assert list(tmp_path.iterdir()) == [target]


def test_an_export_that_dies_midway_leaves_previous_files_whole_and_no_manifest(
    store: Store, populated: Populated, tmp_path: Path
) -> None:
    export_run(store, populated.run_id, Settings(), tmp_path)
    folder = tmp_path / populated.run_id
    before = {p.name: sha256_file(p) for p in folder.iterdir()}
    fresh = Scenario(env_id="env_library_test", initial_state=STATE, task="Lend Emma (b2) to Cy.", checks=[LENT_B1],
                     checklist=[LENT_B1.item], status="verified")
    store.upsert([fresh], populated.run_id)  # a new good row the half-finished export would have written
    table = kind_of(Scenario).table
    with store.engine.begin() as conn:  # a row that no longer parses, sorted after the good ones
        conn.execute(insert(table).values(
            run_id=populated.run_id, fingerprint="f" * 64, env_id="env_library_test", status="verified",
            data='{"env_id": "env_library_test"}', created_at=_now(), updated_at=_now()))
    with pytest.raises(StoreError, match="no longer parses as Scenario"):
        export_run(store, populated.run_id, Settings(), tmp_path, page_size=1)
    after = {p.name: sha256_file(p) for p in folder.iterdir()}
    assert "manifest.json" not in after  # the export is visibly unfinished
    assert after == {n: h for n, h in before.items() if n != "manifest.json"}


def _now():  # type: ignore[no-untyped-def]
    from datetime import datetime

    return datetime(2026, 1, 1)


@pytest.mark.postgres
def test_postgres_and_duckdb_stores_export_identical_files(
    store: Store, populated: Populated, postgres_url: str, tmp_path: Path
) -> None:
    duck = export_run(store, populated.run_id, Settings(), tmp_path / "duck")
    with Store.from_url(postgres_url) as pg:
        pg.save_run(store.get_run(populated.run_id))
        records = [*store.query(AcceptedEnv, populated.run_id), *store.query(Scenario, populated.run_id),
                   *store.query(Trajectory, populated.run_id)]
        pg.upsert(records, populated.run_id)
        postgres = export_run(pg, populated.run_id, Settings(), tmp_path / "pg")
    assert {n: f.sha256 for n, f in postgres.files.items()} == {n: f.sha256 for n, f in duck.files.items()}
