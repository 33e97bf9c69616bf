"""Spec: `envscaler export RUN` filters with the run's own settings, not the current shell's (a real
`python -m envscaler.cli` subprocess against a real DuckDB file).

An outside check imported a run with `ENVSCALER_ROLLOUT__REQUIRE_ALL_PASSED=false`, rolled it out (4 SFT
rows), then ran `envscaler export RUN` in a plain shell: the default filter dropped all 4 and replaced the
run's own sft_messages.jsonl with an empty file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from envscaler_core.config import RolloutSettings, Settings, public_config
from envscaler_core.export import export_run
from envscaler_core.store import Store
from tests.export.records import Populated

RUNS_OWN = Settings(rollout=RolloutSettings(require_all_passed=False, min_steps=0))
"""The run keeps every trajectory (the defaults drop the one that did nothing, reward 0)."""


def _cli(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    plain = {k: v for k, v in os.environ.items() if not k.startswith("ENVSCALER_ROLLOUT__")}
    return subprocess.run([sys.executable, "-m", "envscaler.cli", *args], capture_output=True, text=True,
                          timeout=120, env={**plain, **env})


def _the_runs_own_export(store: Store, populated: Populated, out: Path) -> dict[str, object]:
    """The run's settings stored on it, and its export stage's files written with them."""
    run = store.get_run(populated.run_id)
    store.save_run(run.model_copy(update={"config": public_config(RUNS_OWN)}))
    export_run(store, populated.run_id, RUNS_OWN, out)
    store.close()  # DuckDB: one process holds the file
    return _files(out / populated.run_id)


def _files(where: Path) -> dict[str, object]:
    """Each file's bytes; the manifest's file table (its created_at is the export's own time)."""
    files: dict[str, object] = {p.name: p.read_bytes() for p in where.iterdir() if p.name != "manifest.json"}
    files["manifest.json"] = json.loads((where / "manifest.json").read_text())["files"]
    return files


def test_a_plain_shell_export_writes_the_rows_the_run_kept(
        store: Store, populated: Populated, db_url: str, tmp_path: Path) -> None:
    out = tmp_path / "out"
    before = _the_runs_own_export(store, populated, out)
    assert before["sft_messages.jsonl"].count(b"\n")  # type: ignore[attr-defined] == len(populated.trajectories) == 4
    done = _cli("export", populated.run_id, "--db", db_url, "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert _files(out / populated.run_id) == before  # "two exports of the same run are byte-identical"


def test_a_differing_rollout_setting_in_the_environment_is_refused_and_nothing_is_written(
        store: Store, populated: Populated, db_url: str, tmp_path: Path) -> None:
    out = tmp_path / "out"
    before = _the_runs_own_export(store, populated, out)
    done = _cli("export", populated.run_id, "--db", db_url, "--out", str(out),
                ENVSCALER_ROLLOUT__REQUIRE_ALL_PASSED="true")
    assert done.returncode == 2, done.stdout
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "rollout.require_all_passed" in done.stderr and "ENVSCALER_ROLLOUT__REQUIRE_ALL_PASSED" in done.stderr
    assert _files(out / populated.run_id) == before


def test_a_differing_setting_in_a_config_file_is_refused_naming_the_file(
        store: Store, populated: Populated, db_url: str, tmp_path: Path) -> None:
    out = tmp_path / "out"
    before = _the_runs_own_export(store, populated, out)
    config = tmp_path / "other.toml"
    config.write_text("[rollout]\nmin_steps = 2\n")
    done = _cli("export", populated.run_id, "--db", db_url, "--out", str(out), "-c", str(config))
    assert done.returncode == 2, done.stdout
    assert "rollout.min_steps" in done.stderr and str(config) in done.stderr
    assert _files(out / populated.run_id) == before


def test_the_runs_own_value_given_again_is_accepted(
        store: Store, populated: Populated, db_url: str, tmp_path: Path) -> None:
    out = tmp_path / "out"
    before = _the_runs_own_export(store, populated, out)
    done = _cli("export", populated.run_id, "--db", db_url, "--out", str(out),
                ENVSCALER_ROLLOUT__REQUIRE_ALL_PASSED="false")
    assert done.returncode == 0, done.stderr
    assert _files(out / populated.run_id) == before
