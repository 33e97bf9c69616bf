"""Spec: `envscaler export` as a user runs it (a real subprocess against a real DuckDB file)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from envscaler_core.store import Store
from tests.export.records import Populated


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "envscaler.cli", *args], capture_output=True, text=True, timeout=120)


def test_export_writes_the_run_and_prints_the_summary(store: Store, populated: Populated, db_url: str, tmp_path: Path) -> None:
    store.close()  # DuckDB: one process holds the file
    done = _cli("export", populated.run_id, "--db", db_url, "--out", str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr
    assert "rl rows 2" in done.stdout and "sft rows 3" in done.stdout
    assert (tmp_path / "out" / populated.run_id / "manifest.json").is_file()


def test_format_option_limits_the_files(store: Store, populated: Populated, db_url: str, tmp_path: Path) -> None:
    store.close()
    done = _cli("export", populated.run_id, "--db", db_url, "--out", str(tmp_path), "--format", "sft")
    assert done.returncode == 0, done.stderr
    assert not (tmp_path / populated.run_id / "rl_scenarios.parquet").exists()
    assert (tmp_path / populated.run_id / "sft_messages.jsonl").is_file()


def test_unknown_run_exits_2_with_a_clear_message(store: Store, populated: Populated, db_url: str, tmp_path: Path) -> None:
    store.close()
    done = _cli("export", "run-missing", "--db", db_url, "--out", str(tmp_path / "out"))
    assert done.returncode == 2
    assert "unknown run 'run-missing'" in done.stderr and populated.run_id in done.stderr
    assert not (tmp_path / "out").exists()


def test_unknown_format_exits_2(db_url: str, tmp_path: Path) -> None:
    done = _cli("export", "any", "--db", db_url, "--format", "csv")
    assert done.returncode == 2 and "unknown export format 'csv'" in done.stderr


def test_a_store_another_process_holds_is_one_line_exit_2_and_nothing_written(
        store: Store, populated: Populated, db_url: str, tmp_path: Path) -> None:
    """A run holding the DuckDB file: the lock is said as such (StoreError is a RuntimeError, and the
    export's Ctrl-C handling used to re-raise it as an unexpected error, exit 1)."""
    store.close()
    holder = subprocess.Popen([sys.executable, "-c", "import duckdb, sys, time\n"
                               f"c = duckdb.connect({db_url.removeprefix('duckdb:///')!r})\nprint('held', flush=True)\n"
                               "time.sleep(60)"], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        done = _cli("export", populated.run_id, "--db", db_url, "--out", str(tmp_path / "out"))
    finally:
        holder.kill()
        holder.wait()
    assert done.returncode == 2, done.stderr
    assert "already open in another process" in done.stderr and "unexpected" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "out" / populated.run_id / "manifest.json").exists()


def test_a_run_stopped_before_its_export_is_exported_where_it_was_told_to_write(
        store: Store, populated: Populated, db_url: str, tmp_path: Path) -> None:
    """`run --out DIR` killed before its export stage: `export RUN` writes under DIR, as `report` does."""
    own = tmp_path / "the-runs-own-out"
    run = store.get_run(populated.run_id)
    store.save_run(run.model_copy(update={"status": "interrupted", "outputs": {},
                                          "config": {**run.config, "flow": {"out_dir": str(own)}}}))
    store.close()
    done = _cli("export", populated.run_id, "--db", db_url)
    assert done.returncode == 0, done.stderr
    assert (own / populated.run_id / "manifest.json").is_file(), done.stdout


def test_an_unfinished_run_is_said_so_and_its_status_is_in_the_manifest(
        store: Store, populated: Populated, db_url: str, tmp_path: Path) -> None:
    """An interrupted run's export looked complete, with no word that the run had more to make."""
    import json

    run = store.get_run(populated.run_id)
    store.save_run(run.model_copy(update={"status": "interrupted"}))
    store.close()
    done = _cli("export", populated.run_id, "--db", db_url, "--out", str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert f"warning: run {populated.run_id} is interrupted, not finished" in done.stderr
    manifest = json.loads((tmp_path / populated.run_id / "manifest.json").read_text())
    assert manifest["run_status"] == "interrupted"


def test_files_of_an_earlier_export_are_named_in_the_manifest_and_a_warning(
        store: Store, populated: Populated, db_url: str, tmp_path: Path) -> None:
    """`--format sft` after a full export left rl_*/llamafactory files beside a manifest listing only the SFT ones."""
    import json

    store.close()
    assert _cli("export", populated.run_id, "--db", db_url, "--out", str(tmp_path)).returncode == 0
    done = _cli("export", populated.run_id, "--db", db_url, "--out", str(tmp_path), "--format", "sft")
    assert done.returncode == 0, done.stderr
    stale = ["dataset_info.json", "llamafactory_sharegpt.jsonl", "rl_scenarios.jsonl", "rl_scenarios.parquet",
             "sft_hf.jsonl"]
    manifest = json.loads((tmp_path / populated.run_id / "manifest.json").read_text())
    assert manifest["other_files"] == stale
    assert set(manifest["files"]) == {"envs.jsonl", "sft_messages.jsonl", "sft_messages_meta.jsonl"}
    assert f"also holds {', '.join(stale)} from an earlier export" in done.stderr
