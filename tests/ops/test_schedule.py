"""Spec: a scheduled deployment makes the Prefect server create flow runs, and they run.

The checker found that no schedule ever fired: the server's scheduler failed to insert its runs
(`Can't evaluate bulk DML statement`) with the SQLAlchemy release we had pinned, and it said so only
in its own log. Here a real `prefect server start` (the session harness) and the repository's own
`python -m deployments.serve` with a few-second interval must produce a run that the serving process
starts, against the mock LLM and a throwaway DuckDB file.
"""

from __future__ import annotations

import os
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from mock_llm.server import MockServer
from tests.ops.processes import Managed

pytestmark = [pytest.mark.slow, pytest.mark.prefect]

REPO = Path(__file__).resolve().parents[2]
SOURCE = "envscaler_core/data/api_bank_lv3_slice.json"
DEPLOYMENT = "envscaler-factory/factory-served"
DEADLINE_S = 120.0


@pytest.fixture
def served(prefect_api: str, mock_server: MockServer, tmp_path: Path) -> Iterator[Managed]:
    """`deployments.serve` every 5 s, in its own process group, stopped (with its flow runs) after the test."""
    env = {**os.environ, "PREFECT_API_URL": prefect_api, "ENVSCALER_DB_URL": str(tmp_path / "f.duckdb"),
           "OPENAI_BASE_URL": mock_server.base_url, "OPENAI_API_KEY": "mock", "ENVSCALER_SANDBOX__WORKERS": "1"}
    argv = [sys.executable, "-m", "deployments.serve", "--interval", "5", "--source", SOURCE,
            "--run-id", f"sched-{uuid.uuid4().hex[:8]}"]
    proc = Managed(argv, env, REPO, tmp_path / "serve.log").start()
    try:
        yield proc
    finally:
        proc.stop()


def _runs_of_deployment(api: str) -> list[dict[str, Any]]:
    with httpx.Client(base_url=api, timeout=10) as client:
        found = client.get(f"/deployments/name/{DEPLOYMENT}")
        if found.status_code == 404:
            return []
        found.raise_for_status()
        body = {"deployments": {"id": {"any_": [found.json()["id"]]}}}
        runs = client.post("/flow_runs/filter", json=body)
        runs.raise_for_status()
        return runs.json()


def test_an_interval_schedule_creates_a_flow_run_that_the_serving_process_starts(
        prefect_api: str, served: Managed) -> None:
    deadline = time.monotonic() + DEADLINE_S
    runs: list[dict[str, Any]] = []
    while time.monotonic() < deadline:
        assert served.alive(), f"deployments.serve exited:\n{served.output()[-3000:]}"
        runs = _runs_of_deployment(prefect_api)
        if any(run.get("start_time") for run in runs):
            break
        time.sleep(1)
    states = [(run["name"], run["state_type"], run["start_time"]) for run in runs]
    assert any(run.get("start_time") for run in runs), (
        f"no scheduled run started in {DEADLINE_S:.0f} s; runs of {DEPLOYMENT}: {states}\n"
        f"serve log:\n{served.output()[-3000:]}")
    assert all(run["auto_scheduled"] for run in runs), states
