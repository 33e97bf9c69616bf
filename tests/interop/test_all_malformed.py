"""Spec: an EnvScaler env metadata file whose every record is malformed imports nothing: exit 1, one line
naming the file and how many records were malformed (the first one's reason too), and the store holds
no run for it (it used to exit 0 with an empty "imported" run)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from envscaler_core.store import Store

ENVSCALER = Path(sys.executable).with_name("envscaler")


def _import(envs: Path, db: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(ENVSCALER), "import", "envscaler", "--envs", str(envs), "--db", str(db),
                           "--run-id", "all-bad", *extra], capture_output=True, text=True, timeout=300)


def _all_bad(tmp_path: Path) -> Path:
    envs = tmp_path / "191_env_metadata.json"
    envs.write_text(json.dumps({"env_a": {"env_class_name": "A"}, "env_b": "not an object",
                                "env_c": {"env_class_code": "class C: pass"}}))
    return envs


def test_an_env_file_whose_every_record_is_malformed_exits_1_naming_file_and_count(tmp_path: Path) -> None:
    done = _import(_all_bad(tmp_path), tmp_path / "s.duckdb")
    assert done.returncode == 1, (done.returncode, done.stdout, done.stderr)
    errors = [line for line in done.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1 and "Traceback" not in done.stderr
    assert "191_env_metadata.json" in errors[0] and "all 3 env records are malformed" in errors[0]
    assert "nothing imported" in errors[0]


def test_an_env_file_whose_every_record_is_malformed_stores_no_run(tmp_path: Path) -> None:
    db = tmp_path / "s.duckdb"
    _import(_all_bad(tmp_path), db)
    if db.exists():
        with Store.from_url(f"duckdb:///{db}", create=False) as store:
            assert store.get_run("all-bad") is None and store.list_runs() == []
