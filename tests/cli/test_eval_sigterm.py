"""Spec: SIGTERM (`kill PID`) to `envscaler eval bfcl-mt` takes Ctrl-C's path: finished tasks are kept,
the command that continues the evaluation is printed, naming its store, and there is no traceback (an
outside check got a 97-line traceback, exit 1, and a resume hint without --db that started a new,
empty evaluation in the default store). With --json it prints its summary, status `interrupted` and the
finished tasks' table, on stdout (before, stdout stayed empty)."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path

import pytest

from envscaler_core.models import BFCLTaskResult
from envscaler_core.store import Store
from mock_llm.server import MockServer
from tests.cli.helpers import ENVSCALER, assert_no_noise, clean_env

pytestmark = [pytest.mark.prefect, pytest.mark.slow]


def test_sigterm_keeps_finished_tasks_and_prints_the_resume_with_its_store(slow_mock: MockServer, prefect_api: str,
                                                                           tmp_path: Path) -> None:
    db = tmp_path / "eval.duckdb"
    env = clean_env(tmp_path, PREFECT_API_URL=prefect_api, OPENAI_BASE_URL=slow_mock.base_url, OPENAI_API_KEY="mock")
    before = slow_mock.stats()["requests_total"]
    proc = subprocess.Popen([str(ENVSCALER), "eval", "bfcl-mt", "--subset", "base", "--limit", "3", "--agent", "llm",
                             "--run-id", "ev", "--db", str(db), "--json"], env=env, cwd=tmp_path, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + 180
        while slow_mock.stats()["requests_total"] - before < 2 and time.monotonic() < deadline:
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.2)
        proc.send_signal(signal.SIGTERM)  # the process only, as `kill PID` does
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, err[-3000:]
    assert "interrupted: evaluation ev stopped; finished tasks are kept" in err
    assert "--run-id ev --subset base --agent llm --limit 3" in err and f"--db {db}" in err
    assert_no_noise(err)
    summary = json.loads(out)
    with Store.from_url(f"duckdb:///{db}", create=False) as store:
        finished = len(store.query(BFCLTaskResult, run_id="ev"))
    assert summary["status"] == "interrupted" and summary["subsets"]["base"]["tasks"] == finished
