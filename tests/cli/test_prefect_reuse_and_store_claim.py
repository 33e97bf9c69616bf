"""Spec: `run` reports to the local Prefect server the demo left running (recorded beside the default store)
instead of starting a temporary one, says so, and names the flow run after the run id; a stale record is
dropped. A read-only verb holding the DuckDB file for a moment when a run starts never makes the run fail."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.cli.helpers import assert_no_noise, clean_env, envscaler

pytestmark = [pytest.mark.prefect]
TASKS = '{"task": "What is the capital of France?"}\n{"task": "Compute 17 times 23."}\n'


@pytest.fixture
def user(tmp_path: Path, mock_server: Any) -> dict[str, Any]:
    (tmp_path / "home").mkdir()
    source = tmp_path / "tasks.jsonl"
    source.write_text(TASKS)
    data = tmp_path / "home" / ".local" / "share" / "envscaler"
    env = clean_env(tmp_path / "home", OPENAI_BASE_URL=mock_server.base_url, OPENAI_API_KEY="mock")
    return {"env": env, "source": source, "data": data, "tmp": tmp_path}


@pytest.mark.parametrize(("whose", "how"), [("own", "started"), ("found", "found running (not started by it)")])
def test_a_run_reports_to_the_server_the_demo_left_and_names_its_flow_run(user: dict[str, Any], prefect_api: str,
                                                                          whose: str, how: str) -> None:
    """A server the demo found already answering (another user's, on a shared machine) is not called
    one the demo started (its record has no pid; a live pid stands for the one the demo started)."""
    pid = os.getpid() if whose == "own" else None
    user["data"].mkdir(parents=True)
    (user["data"] / "prefect-server.json").write_text(json.dumps(
        {"api_url": prefect_api, "pid": pid, "started_by": "`envscaler demo`"}))
    run_id = f"reuse-{whose}"
    out = envscaler("run", "-s", str(user["source"]), "--run-id", run_id, env=user["env"])
    assert out.returncode == 4, out.stderr[-3000:]  # nothing stateful: finished empty
    assert f"Prefect: reporting to the local server `envscaler demo` {how} ({prefect_api.removesuffix('/api')}" \
        in out.stderr
    assert "starting a temporary" not in out.stderr
    assert_no_noise(out.stderr)
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterName

    with get_client(sync_client=True) as client:
        runs = client.read_flow_runs(flow_run_filter=FlowRunFilter(name=FlowRunFilterName(any_=[run_id])))
    assert [r.name for r in runs] == [run_id]


def test_a_stale_record_is_dropped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from envscaler.prefect_server import free_port, record_path, recorded_server

    monkeypatch.setenv("ENVSCALER_DATA_DIR", str(tmp_path))
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    record_path().write_text(json.dumps({"api_url": f"http://127.0.0.1:{free_port()}/api", "pid": int(dead.stdout)}))
    assert recorded_server() is None and not record_path().exists()


def test_a_reader_holding_the_store_when_a_run_starts_does_not_stop_it(user: dict[str, Any], prefect_api: str) -> None:
    db = user["tmp"] / "runs.duckdb"
    env = {**user["env"], "PREFECT_API_URL": prefect_api, "ENVSCALER_DB_URL": str(db)}
    with_store = subprocess.run([sys.executable, "-c", f"from envscaler_core.store import Store; Store.from_url({str(db)!r}).close()"],
                                check=True)
    assert with_store.returncode == 0
    reader = subprocess.Popen([sys.executable, "-c", (
        "import time; from envscaler_core.store import Store\n"
        f"s = Store.from_url({str(db)!r}, create=False); print('held', flush=True); time.sleep(4); s.close()")],
        stdout=subprocess.PIPE, text=True)
    try:
        assert reader.stdout is not None and reader.stdout.readline().strip() == "held"
        out = envscaler("run", "-s", str(user["source"]), "--run-id", "raced", "--quiet", env=env)
    finally:
        reader.wait(timeout=30)
    assert out.returncode == 4, out.stderr[-3000:]
    assert "already open" not in out.stderr
