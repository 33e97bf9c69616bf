"""Spec (issue 6): a run SIGKILLed in every stage and resumed each time ends exactly like an
uninterrupted run: same funnel, no duplicated rows, every source task accounted for, and no LLM
request paid twice for work that had completed (store audit log and mock server counter).

The run is the real CLI (`envscaler run` / `envscaler resume`) in a subprocess, reporting to the
session Prefect server, talking HTTP to the session mock LLM (slowed down so each stage is long
enough to be hit), writing a real DuckDB file.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from envscaler_core.models import EnvCandidate, EnvTopic, SourceTask, StageFailure, Trajectory
from envscaler_core.store import Store

pytestmark = [pytest.mark.prefect, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
SLICE = ROOT / "envscaler_core" / "data" / "api_bank_lv3_slice.json"
ENVSCALER = Path(sys.executable).with_name("envscaler")
# (prompt id whose requests mark the stage, how many of them to let through before the kill)
KILL_POINTS = [("mine.infer_topic_batch", 2), ("synth.method", 4), ("validate.judge_call", 10),
               ("scen.check_functions", 2), ("agent.solve", 2)]


def write_config(path: Path, db: Path, out: Path, base_url: str) -> Path:
    config = {"mine": {"max_tasks": 40, "select_n": 4, "llm_batch": 2}, "validate": {"mode": "both", "rounds": 8},
              "scen": {"per_env": 2}, "flow": {"batch_size": 2, "out_dir": str(out)},
              "store": {"url": f"duckdb:///{db}"},
              "llm": {"base_url": base_url, "api_key": "mock", "max_concurrency": 4, "backoff_base_s": 0.05}}
    path.write_text(json.dumps(config))
    return path


def cli(*args: str, prefect_api: str) -> subprocess.Popen[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ENVSCALER_"))}
    env["PREFECT_API_URL"] = prefect_api
    return subprocess.Popen([str(ENVSCALER), *args], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, start_new_session=True)


def kill_when(proc: subprocess.Popen[bytes], mock: Any, prompt: str, after: int, timeout: float = 120) -> bool:
    """SIGKILL the whole process group once `after` more `prompt` requests reached the mock.
    False if the process finished first."""
    start = mock.stats()["by_prompt"].get(prompt, 0)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return False
        if mock.stats()["by_prompt"].get(prompt, 0) - start >= after:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            return True
        time.sleep(0.01)
    os.killpg(proc.pid, signal.SIGKILL)
    raise AssertionError(f"no {prompt} request within {timeout}s: {proc.stdout.read().decode()[-3000:]}")


def finish(proc: subprocess.Popen[bytes]) -> str:
    out, _ = proc.communicate(timeout=300)
    text = out.decode()
    assert proc.returncode == 0, text[-3000:]
    return text


def store_facts(db: Path, run_id: str) -> dict[str, Any]:
    store = Store.from_url(f"duckdb:///{db}")
    try:
        tasks = store.query(SourceTask, run_id=run_id)
        failures = store.query(StageFailure, run_id=run_id)
        with store.engine.connect() as conn:
            from sqlalchemy import text

            paid = conn.execute(text("SELECT fingerprint, count(*) FROM llm_calls WHERE status = 'ok' "
                                     "GROUP BY fingerprint HAVING count(*) > 1")).fetchall()
        return {
            "funnel": store.funnel(run_id), "status": store.get_run(run_id).status,
            "unjudged": [t.fingerprint for t in tasks if t.stateful is None
                         and not any(f.item_fp == t.fingerprint for f in failures)],
            "topics_per_task": Counter(t.source_task_fp for t in store.query(EnvTopic, run_id=run_id)),
            "candidates_per_topic": Counter(c.topic_fp for c in store.query(EnvCandidate, run_id=run_id)),
            "trajectories_per_sample": Counter((t.scenario_fp, t.sample) for t in store.query(Trajectory, run_id=run_id)),
            "paid_twice": paid,
        }
    finally:
        store.close()


def flow_run_states(prefect_api: str, name: str, db: Path) -> list[str]:
    """The state types of the flow runs with this name on this store, as the dashboard shows them (the
    session's server also holds other specs' runs, some of the same name)."""
    import httpx

    body = {"flow_runs": {"name": {"any_": [name]}}, "limit": 200}
    runs = httpx.post(f"{prefect_api}/flow_runs/filter", json=body, timeout=30).json()
    return [run["state_type"] for run in runs
            if str(db) in str(((run.get("parameters") or {}).get("config") or {}).get("store", {}).get("url", ""))]


@pytest.fixture
def slow_mock(mock_stats_reset: Any) -> Any:
    mock_stats_reset.set_faults(latency_ms=15)
    return mock_stats_reset


def test_kill_in_every_stage_then_resume_matches_an_uninterrupted_run(
        slow_mock: Any, prefect_api: str, tmp_path: Path) -> None:
    mock = slow_mock
    ref_db, db = tmp_path / "reference.duckdb", tmp_path / "killed.duckdb"
    ref_cfg = write_config(tmp_path / "ref.json", ref_db, tmp_path / "out-ref", mock.base_url)
    cfg = write_config(tmp_path / "cfg.json", db, tmp_path / "out", mock.base_url)

    before = mock.stats()["requests_total"]
    finish(cli("run", "-s", str(SLICE), "-c", str(ref_cfg), "--run-id", "ref", prefect_api=prefect_api))
    reference_requests = mock.stats()["requests_total"] - before

    before = mock.stats()["requests_total"]
    kills = 0
    proc = cli("run", "-s", str(SLICE), "-c", str(cfg), "--run-id", "victim", prefect_api=prefect_api)
    for prompt, after in KILL_POINTS:
        if kill_when(proc, mock, prompt, after):
            kills += 1
            proc = cli("resume", "victim", "--db", f"duckdb:///{db}", prefect_api=prefect_api)
    finish(proc)
    interrupted_requests = mock.stats()["requests_total"] - before

    assert kills == len(KILL_POINTS), f"only {kills} of {len(KILL_POINTS)} kill points were reached"
    ref, got = store_facts(ref_db, "ref"), store_facts(db, "victim")
    assert got["status"] == "completed"
    assert got["funnel"] == ref["funnel"]
    assert got["unjudged"] == [], "source tasks neither judged nor failed with a reason"
    for key in ("topics_per_task", "candidates_per_topic", "trajectories_per_sample"):
        assert max(got[key].values(), default=1) == 1, f"duplicated {key}: {got[key].most_common(3)}"
    assert got["paid_twice"] == [], "an LLM call that had completed was paid for again"
    states = flow_run_states(prefect_api, "victim", db)
    assert states.count("COMPLETED") == 1 and states.count("CRASHED") == kills, states
    assert "RUNNING" not in states, "a killed run's flow run is left Running on the dashboard"
    # only requests in flight at a kill may be repeated: at most max_concurrency (4) per kill
    assert interrupted_requests <= reference_requests + 4 * kills, (interrupted_requests, reference_requests)
