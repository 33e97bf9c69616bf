"""Spec: `status` does not call a run running when no process runs it. A run killed with SIGKILL cannot
record that it stopped; its DuckDB file, which a live run holds, opens freely, so `status` shows the run
as interrupted with the command that continues it (a red team saw killed runs shown `running`, their
elapsed time still growing, for as long as it looked)."""

from __future__ import annotations

import json
from pathlib import Path

from envscaler_core.models import Run
from envscaler_core.store import Store
from tests.cli.helpers import clean_env, envscaler


def _left_running(tmp_path: Path, run_id: str) -> str:
    url = f"duckdb:///{tmp_path / 'killed.duckdb'}"
    with Store.from_url(url) as store:
        store.save_run(Run(run_id=run_id, status="running", stage="validate"))
    return url


def test_a_run_whose_process_is_gone_shows_as_interrupted_with_the_resume_command(tmp_path: Path) -> None:
    url = _left_running(tmp_path, "killed")
    out = envscaler("status", "killed", "--db", url, "--json", env=clean_env(tmp_path))
    assert out.returncode == 0, out.stderr
    shown = json.loads(out.stdout)
    assert shown["status"] == "interrupted"
    assert "its process is gone" in shown["error"] and "resume killed" in shown["error"]


def test_watching_such_a_run_ends_at_once_on_the_same_verdict(tmp_path: Path) -> None:
    url = _left_running(tmp_path, "killed")
    out = envscaler("status", "killed", "--db", url, "--watch", env=clean_env(tmp_path), timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[0] == "run killed: interrupted"
