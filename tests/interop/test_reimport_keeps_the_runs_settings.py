"""Spec: `envscaler import envscaler ... --run-id IMP` into an existing import refuses a run setting given
with another value than the import's, naming it, as `run --run-id` and `export` do: importing the same
inputs again changes nothing, so the setting was silently ignored while the run kept its own. (The real
`python -m envscaler.cli` of this tree, a real sandbox and DuckDB file.)"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from envscaler_core.store import Store
from tests.interop.conftest import FILES, fixture_files

ROOT = Path(__file__).resolve().parents[2]


def _import(directory: Path, db: str, **env: str) -> subprocess.CompletedProcess[str]:
    plain = {k: v for k, v in os.environ.items() if not k.startswith("ENVSCALER_ROLLOUT__")}
    return subprocess.run([sys.executable, "-m", "envscaler.cli", "import", "envscaler", "--envs",
                           str(directory / FILES[0]), "--scenarios", str(directory / FILES[1]),
                           str(directory / FILES[2]), "--db", db, "--run-id", "imp"],
                          capture_output=True, text=True, timeout=300, cwd=ROOT, env={**plain, **env})


def _stored_filter(db: str) -> Any:
    with Store.from_url(db, create=False) as store:
        return store.get_run("imp").config["rollout"]["require_all_passed"]


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("reimport-settings")
    directory, db = fixture_files(tmp), f"duckdb:///{tmp / 'store.duckdb'}"
    done = _import(directory, db, ENVSCALER_ROLLOUT__REQUIRE_ALL_PASSED="false")
    assert done.returncode == 0, done.stderr[-3000:]
    assert _stored_filter(db) is False
    return {"dir": directory, "db": db}


def test_another_value_of_a_run_setting_is_refused_naming_it(imported: dict[str, Any]) -> None:
    done = _import(imported["dir"], imported["db"], ENVSCALER_ROLLOUT__REQUIRE_ALL_PASSED="true")
    assert done.returncode == 2, done.stdout
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "rollout.require_all_passed" in done.stderr and "ENVSCALER_ROLLOUT__REQUIRE_ALL_PASSED" in done.stderr
    assert _stored_filter(imported["db"]) is False


def test_the_same_import_from_a_plain_shell_changes_nothing(imported: dict[str, Any]) -> None:
    done = _import(imported["dir"], imported["db"])
    assert done.returncode == 0, done.stderr
    assert "nothing changed" in done.stderr
    assert _stored_filter(imported["db"]) is False
