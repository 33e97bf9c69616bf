"""Spec: `envscaler resume` finds a run's sources wherever it is started, for a run recorded with a
relative source path (as deployments recorded them: taken in the worker's ENVSCALER_HOME).

`status` prints `envscaler resume RUN --db ...` for such a run, and it failed with "source file(s) not
found" from any directory but the worker's checkout. Now the path is looked up in the current
directory and in ENVSCALER_HOME, the run's record is rewritten to the absolute path found, and a file
found in neither is refused in one line naming both directories. Runs this tree's CLI
(`python -m envscaler.cli`), whatever the working directory.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from envscaler_core.config import load_settings, public_config
from envscaler_core.mine.source_report import inspect_sources
from envscaler_core.models import Run
from envscaler_core.store import Store
from tests.cli.helpers import assert_one_line_error, clean_env

pytestmark = [pytest.mark.prefect]

REPO = Path(__file__).resolve().parents[2]
SLICE = REPO / "envscaler_core" / "data" / "api_bank_lv3_slice.json"
RELATIVE = "data/tasks.json"


@pytest.fixture
def made(tmp_path: Path, mock_server: Any, prefect_api: str) -> dict[str, Any]:
    """An interrupted mine-only run that read `data/tasks.json` in the worker's checkout, recorded relative."""
    checkout, elsewhere = tmp_path / "checkout", tmp_path / "elsewhere"
    (checkout / "data").mkdir(parents=True)
    elsewhere.mkdir()
    (tmp_path / "home").mkdir()
    shutil.copy(SLICE, checkout / RELATIVE)
    db = tmp_path / "runs.duckdb"
    settings = load_settings(environ={}, overrides={"store": {"url": str(db)}, "mine": {"max_tasks": 30, "select_n": 4}})
    report = inspect_sources([str(checkout / RELATIVE)])
    report = report.model_copy(update={"files": [f.model_copy(update={"path": RELATIVE}) for f in report.files]})
    store = Store.from_url(str(db))
    try:
        store.save_run(Run(run_id="depB", status="interrupted", config=public_config(settings), sources=[RELATIVE],
                           stages=["mine"], sources_report=report))
    finally:
        store.close()
    env = clean_env(tmp_path / "home", OPENAI_BASE_URL=mock_server.base_url, OPENAI_API_KEY="mock",
                    PREFECT_API_URL=prefect_api, PYTHONPATH=str(REPO))
    return {"env": env, "db": db, "checkout": checkout, "elsewhere": elsewhere}


def _resume(made: dict[str, Any], **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "envscaler.cli", "resume", "depB", "--db", str(made["db"]), "-q"],
                          capture_output=True, text=True, cwd=made["elsewhere"], env={**made["env"], **env},
                          timeout=300, stdin=subprocess.DEVNULL)


def _run(db: Path) -> Run:
    store = Store.from_url(str(db))
    try:
        run = store.get_run("depB")
        assert run is not None
        return run
    finally:
        store.close()


def test_resume_from_another_directory_finds_the_source_in_envscaler_home(made: dict[str, Any]) -> None:
    done = _resume(made, ENVSCALER_HOME=str(made["checkout"]))
    assert done.returncode == 0, (done.stdout[-2000:], done.stderr[-3000:])
    run = _run(made["db"])
    assert run.status == "completed", run.status
    assert run.sources == [str(made["checkout"] / RELATIVE)]


def test_a_relative_source_found_nowhere_is_refused_naming_where_it_was_looked_for(made: dict[str, Any]) -> None:
    (made["checkout"] / RELATIVE).unlink()
    out = _resume(made, ENVSCALER_HOME=str(made["checkout"]))
    assert_one_line_error(out, f"run depB: source file(s) not found: {RELATIVE}", str(made["elsewhere"]),
                          str(made["checkout"]), "put the file back")
    assert _run(made["db"]).status == "interrupted"
