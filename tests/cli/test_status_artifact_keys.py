"""Spec: `envscaler status RUN` prints the keys of the run's Prefect artifacts, as the flows publish them.

Prefect keys allow only lowercase letters, digits and dashes, so run `killA` publishes
`funnel-killa-98c9b69a`, and an outside check that filtered on the documented `funnel-killA` found
nothing. Runs this tree's CLI on a real DuckDB file.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from envscaler_core.models import Run
from envscaler_core.store import Store
from flows.progress import artifact_key
from tests.cli.helpers import clean_env

REPO = Path(__file__).resolve().parents[2]


def _status(tmp_path: Path, run_id: str) -> str:
    db = tmp_path / "runs.duckdb"
    store = Store.from_url(str(db))
    try:
        store.save_run(Run(run_id=run_id, status="completed", config={}, sources=[]))
    finally:
        store.close()
    (tmp_path / "home").mkdir()
    out = subprocess.run([sys.executable, "-m", "envscaler.cli", "status", run_id, "--db", str(db)],
                         capture_output=True, text=True, cwd=tmp_path, timeout=120, stdin=subprocess.DEVNULL,
                         env=clean_env(tmp_path / "home", PYTHONPATH=str(REPO)))
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_a_run_id_with_capitals_shows_the_keys_it_really_publishes_under(tmp_path: Path) -> None:
    out = _status(tmp_path, "killA")
    assert "Prefect artifacts: funnel-killa-98c9b69a, progress-killa-98c9b69a" in out, out
    assert artifact_key("funnel", "killA") == "funnel-killa-98c9b69a"


@pytest.mark.parametrize("run_id", ["nightly", "nightly-2026-01-31"])
def test_a_lowercase_run_id_is_its_own_key(tmp_path: Path, run_id: str) -> None:
    assert f"Prefect artifacts: funnel-{run_id}, progress-{run_id}" in _status(tmp_path, run_id)
