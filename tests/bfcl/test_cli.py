"""Spec: `envscaler eval bfcl-mt` end to end: the real CLI in a subprocess, the session Prefect server,
a real DuckDB file, the mock LLM over HTTP through the real `openai` client.

The gold agent is the harness's self-test (BFCL's own checker must find every subset 100% correct);
the mock's deliberately wrong player scores exactly what `multi_turn_checker` says of its calls; and
an evaluation SIGKILLed mid-run and resumed ends as an uninterrupted one, without replaying a
finished task or paying an LLM call twice.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from envscaler_core.bfcl.data import find_task
from envscaler_core.bfcl.reference import score_in_process
from envscaler_core.models import BFCLEvalReport, BFCLTaskResult
from envscaler_core.store import Store
from tests.cli.helpers import ctrl_c_reaches

pytestmark = [pytest.mark.prefect]

ROOT = Path(__file__).resolve().parents[2]
ENVSCALER = Path(sys.executable).with_name("envscaler")


def config_file(tmp_path: Path, base_url: str, **llm: Any) -> Path:
    path = tmp_path / f"config-{len(list(tmp_path.iterdir()))}.json"
    path.write_text(json.dumps({"llm": {"base_url": base_url, "api_key": "mock", "backoff_base_s": 0.05, **llm}}))
    return path


def cli(*args: str, prefect_api: str) -> subprocess.Popen[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ENVSCALER_"))}
    env["PREFECT_API_URL"] = prefect_api
    return subprocess.Popen([str(ENVSCALER), *args], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True, preexec_fn=ctrl_c_reaches)


def run_json(*args: str, prefect_api: str) -> dict[str, Any]:
    proc = cli(*args, "--json", prefect_api=prefect_api)
    out, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err.decode()[-3000:]
    return json.loads(out.decode().strip().splitlines()[-1])


def results(db: Path, run_id: str) -> dict[str, BFCLTaskResult]:
    with Store.from_url(f"duckdb:///{db}") as store:
        return {r.task_id: r for r in store.query(BFCLTaskResult, run_id=run_id)}


def test_gold_agent_scores_every_subset_perfectly(prefect_api: str, tmp_path: Path) -> None:
    db = tmp_path / "gold.duckdb"
    summary = run_json("eval", "bfcl-mt", "--subset", "all", "--limit", "3", "--agent", "gold", "--run-id", "gold",
                       "--db", f"duckdb:///{db}", prefect_api=prefect_api)
    assert summary["run_id"] == "gold"
    assert summary["subsets"] == {s: {"tasks": 3, "valid": 3, "accuracy": 1.0}
                                  for s in ("base", "miss_func", "miss_param", "long_context")}
    with Store.from_url(f"duckdb:///{db}") as store:
        [report] = store.query(BFCLEvalReport, run_id="gold")
        assert store.get_run("gold").status == "completed"
    assert report.complete and report.overall == 1.0
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterKey

    with get_client(sync_client=True) as client:
        [artifact] = client.read_artifacts(artifact_filter=ArtifactFilter(key=ArtifactFilterKey(any_=["bfcl-gold"])))
    assert "| long_context | 3 | 3 | 100.00 |" in artifact.data


def test_the_llm_path_over_http_scores_the_mock_player_perfectly(
        mock_stats_reset: Any, prefect_api: str, tmp_path: Path) -> None:
    db = tmp_path / "llm.duckdb"
    cfg = config_file(tmp_path, mock_stats_reset.base_url)
    summary = run_json("eval", "bfcl-mt", "--subset", "miss_func,miss_param", "--limit", "3", "--agent", "llm",
                       "--model", "mock-bfcl", "-c", str(cfg), "--db", f"duckdb:///{db}", prefect_api=prefect_api)
    assert {s: v["accuracy"] for s, v in summary["subsets"].items()} == {"miss_func": 1.0, "miss_param": 1.0}
    assert mock_stats_reset.stats()["by_prompt"].get("agent.bfcl", 0) > 0


def test_a_second_evaluation_of_the_same_model_asks_the_model_again(
        mock_stats_reset: Any, prefect_api: str, tmp_path: Path) -> None:
    """Another run id is another measurement (e.g. after training, same served name): none of the first
    run's answers may stand in for the model's; only a resume of the same run id reuses its own."""
    db, cfg = tmp_path / "twice.duckdb", config_file(tmp_path, mock_stats_reset.base_url)
    args = ("eval", "bfcl-mt", "--subset", "base", "--limit", "2", "--agent", "llm", "--model", "mock-bfcl",
            "-c", str(cfg), "--db", f"duckdb:///{db}")
    run_json(*args, "--run-id", "before", prefect_api=prefect_api)
    first = mock_stats_reset.stats()["by_prompt"]["agent.bfcl"]
    run_json(*args, "--run-id", "after", prefect_api=prefect_api)
    assert mock_stats_reset.stats()["by_prompt"]["agent.bfcl"] == 2 * first
    run_json(*args, "--run-id", "after", prefect_api=prefect_api)  # a resume of a finished run: nothing
    assert mock_stats_reset.stats()["by_prompt"]["agent.bfcl"] == 2 * first


def test_a_wrong_agent_scores_what_the_checker_says(mock_stats_reset: Any, prefect_api: str, tmp_path: Path) -> None:
    db = tmp_path / "wrong.duckdb"
    cfg = config_file(tmp_path, mock_stats_reset.base_url)
    summary = run_json("eval", "bfcl-mt", "--subset", "base", "--limit", "6", "--agent", "llm", "--model",
                       "mock-bfcl-drop-last", "--run-id", "wrong", "-c", str(cfg), "--db", f"duckdb:///{db}",
                       prefect_api=prefect_api)
    stored = results(db, "wrong")
    assert summary["subsets"]["base"]["accuracy"] < 1.0
    for task_id, result in stored.items():
        expected = score_in_process(find_task(task_id), result.decoded)
        assert (result.valid, result.error_type) == (expected.valid, expected.error_type), task_id
    assert summary["subsets"]["base"]["valid"] == sum(r.valid for r in stored.values())


def test_resuming_an_evaluation_with_other_tasks_is_refused_and_keeps_its_results(prefect_api: str,
                                                                                 tmp_path: Path) -> None:
    """Other --subset/--limit would mark the run complete on those tasks and hide what it had scored."""
    db = f"duckdb:///{tmp_path / 'r.duckdb'}"
    run_json("eval", "bfcl-mt", "--subset", "base", "--limit", "2", "--run-id", "r", "--db", db, prefect_api=prefect_api)
    for other in (["--subset", "base", "--limit", "1"], ["--subset", "miss_func", "--limit", "2"]):
        proc = cli("eval", "bfcl-mt", *other, "--run-id", "r", "--db", db, prefect_api=prefect_api)
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == 2, err.decode()[-2000:]
        assert "evaluates --subset base --limit 2; resume it with the same --subset/--limit" in err.decode()
    assert sorted(results(tmp_path / "r.duckdb", "r")) == ["multi_turn_base_0", "multi_turn_base_1"]


def test_bad_options_fail_in_one_line(prefect_api: str) -> None:
    for args, needle in ((["eval", "bfcl-v9"], "unknown benchmark"),
                         (["eval", "bfcl-mt", "--subset", "base,simple"], "unknown subset"),
                         (["eval", "bfcl-mt", "--model", "x"], "--model only applies"),
                         (["eval", "bfcl-mt", "--subset", "base,,miss_func"], "empty subset name"),
                         (["eval", "bfcl-mt", "--agent", "llm", "--model", ""], "--model is empty")):
        proc = cli(*args, prefect_api=prefect_api)
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 2 and needle in err.decode() and len(err.decode().strip().splitlines()) == 1


@pytest.mark.slow
def test_a_killed_evaluation_resumes_without_repeating_finished_tasks(
        mock_stats_reset: Any, prefect_api: str, tmp_path: Path) -> None:
    mock = mock_stats_reset
    mock.set_faults(latency_ms=40)
    cfg = config_file(tmp_path, mock.base_url, max_concurrency=4)
    ref_db, db = tmp_path / "ref.duckdb", tmp_path / "killed.duckdb"
    args = ["eval", "bfcl-mt", "--subset", "base", "--limit", "16", "--agent", "llm", "--model", "mock-bfcl-drop-last",
            "-c", str(cfg)]
    before = mock.stats()["requests_total"]
    reference = run_json(*args, "--run-id", "ref", "--db", f"duckdb:///{ref_db}", prefect_api=prefect_api)
    reference_requests = mock.stats()["requests_total"] - before

    before = mock.stats()["requests_total"]
    proc = cli(*args, "--run-id", "victim", "--db", f"duckdb:///{db}", prefect_api=prefect_api)
    deadline = time.monotonic() + 300
    while mock.stats()["requests_total"] - before < reference_requests // 2:
        assert proc.poll() is None and time.monotonic() < deadline, "the evaluation ended before the kill point"
        time.sleep(0.01)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    finished_before = {tid: r.finished_at for tid, r in results(db, "victim").items()}
    assert 0 < len(finished_before) < 16

    resumed = run_json(*args, "--run-id", "victim", "--db", f"duckdb:///{db}", prefect_api=prefect_api)
    after = results(db, "victim")
    assert resumed["subsets"] == reference["subsets"]
    assert {t: r.valid for t, r in after.items()} == {t: r.valid for t, r in results(ref_db, "ref").items()}
    assert all(after[t].finished_at == at for t, at in finished_before.items()), "a finished task was played again"
    with Store.from_url(f"duckdb:///{db}") as store, store.engine.connect() as conn:
        from sqlalchemy import text

        paid_twice = conn.execute(text("SELECT fingerprint FROM llm_calls WHERE status = 'ok' "
                                       "GROUP BY fingerprint HAVING count(*) > 1")).fetchall()
    assert paid_twice == []
    # only requests in flight at the kill may be sent again: at most max_concurrency of them
    assert mock.stats()["requests_total"] - before <= reference_requests + 4


@pytest.mark.slow
def test_ctrl_c_stops_an_evaluation_with_exit_130_and_the_resume_command(prefect_api: str, tmp_path: Path) -> None:
    from mock_llm.http_state import FaultConfig
    from mock_llm.server import MockServer
    from tests.cli.helpers import assert_no_noise

    db = tmp_path / "int.duckdb"
    with MockServer(faults=FaultConfig(latency_ms=1500)) as slow:
        args = ("eval", "bfcl-mt", "--limit", "2", "--agent", "llm", "--run-id", "stopped",
                "--db", f"duckdb:///{db}", "-c", str(config_file(tmp_path, slow.base_url)))
        proc = cli(*args, prefect_api=prefect_api)
        deadline = time.monotonic() + 240
        while slow.stats()["requests_total"] == 0:  # the evaluation is waiting on the model: mid-run
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
            time.sleep(0.2)
        os.killpg(proc.pid, signal.SIGINT)  # as a terminal sends Ctrl-C: to the whole process group
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err.decode()[-3000:]
    assert_no_noise(err.decode())
    assert "envscaler eval bfcl-mt --run-id stopped --subset base --agent llm --limit 2 --model" in err.decode()
    with Store.from_url(f"duckdb:///{db}") as store:
        run = store.get_run("stopped")
    assert run is not None and run.status == "interrupted" and (run.error or "").startswith("interrupted (")
