"""Spec: SIGTERM (`kill PID`, a CI runner's or a service manager's stop) ends `envscaler run` the way
Ctrl-C does: the run is marked interrupted, what was stored and the resume command are printed, no
traceback, exit 143 (it used to end at once without a word, the run left `running`)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest

from mock_llm.server import MockServer
from tests.cli.helpers import ENVSCALER, SLICE, SMALL_TOML, assert_no_noise, clean_env, envscaler, wait_for_step

pytestmark = [pytest.mark.slow]
RUN = "terminate-me"


@pytest.fixture(scope="module")
def terminated(slow_mock: MockServer, prefect_api: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("sigterm")
    (tmp / "home").mkdir()
    (tmp / "f.toml").write_text(SMALL_TOML)
    db = tmp / "runs.duckdb"
    env = clean_env(tmp / "home", OPENAI_BASE_URL=slow_mock.base_url, OPENAI_API_KEY="mock",
                    ENVSCALER_DB_URL=f"duckdb:///{db}", PREFECT_API_URL=prefect_api)
    proc = subprocess.Popen([str(ENVSCALER), "run", "-s", str(SLICE), "-c", str(tmp / "f.toml"), "--run-id", RUN],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=tmp,
                            start_new_session=True)
    try:
        wait_for_step(Path(f"{db}.progress") / f"{RUN}.json", proc)
        assert proc.poll() is None, "the run ended before SIGTERM: make the mock slower"
        os.kill(proc.pid, signal.SIGTERM)  # the process only, as `kill PID` does
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    return {"code": proc.returncode, "stdout": out, "stderr": err, "db": db,
            "after": envscaler("status", RUN, "--json", env=env)}


def test_sigterm_exits_143_with_the_resume_command(terminated: dict[str, Any]) -> None:
    assert terminated["code"] == 143, terminated["stderr"][-3000:]
    assert f"terminated (SIGTERM): run {RUN} stopped; finished work is kept" in terminated["stderr"]
    assert f"resume {RUN} --db duckdb:///{terminated['db']}" in terminated["stderr"]
    assert_no_noise(terminated["stderr"])


def test_sigterm_marks_the_run_interrupted(terminated: dict[str, Any]) -> None:
    after = json.loads(terminated["after"].stdout)
    assert after["status"] == "interrupted" and "resume" in after["error"]
