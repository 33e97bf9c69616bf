"""Spec: `envscaler eval bfcl-mt` under a budget. A cost budget with an agent model that has no price is
refused before anything runs, however the model was named (`--model`, or kept from the run it resumes),
as it is for `llm.models.agent` (an outside check: `--model` ran 26 paid requests at cost 0, exit 0).
An evaluation that stops (its budget, SIGTERM) still prints its `--json` summary with a `status` and the
finished tasks' table, as `run --json` does (before, stdout stayed empty; SIGTERM's case is in
test_eval_sigterm.py). An endpoint that sends no
`usage` is warned about once: BFCL's own runs fail every task on it. Real CLI, real mock over HTTP."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from envscaler_core.models import BFCLTaskResult
from envscaler_core.store import Store
from mock_llm.server import MockServer
from tests.cli.helpers import assert_one_line_error, clean_env, envscaler

pytestmark = [pytest.mark.prefect]
LLM_EVAL = ("eval", "bfcl-mt", "--subset", "base", "--agent", "llm")


def _env(tmp_path: Path, mock: MockServer, prefect_api: str, **extra: str) -> dict[str, str]:
    return clean_env(tmp_path, PREFECT_API_URL=prefect_api, OPENAI_BASE_URL=mock.base_url, OPENAI_API_KEY="mock",
                     **extra)


def _chat_requests(mock: MockServer) -> int:
    return sum(n for path, n in mock.stats()["by_path"].items() if "chat" in path)


def _finished(db: Path, run_id: str) -> int:
    with Store.from_url(f"duckdb:///{db}", create=False) as store:
        return len(store.query(BFCLTaskResult, run_id=run_id))


def test_a_cost_budget_refuses_an_unpriced_model_given_by_flag_before_any_request(
        mock_server: MockServer, prefect_api: str, tmp_path: Path) -> None:
    before = _chat_requests(mock_server)
    out = envscaler(*LLM_EVAL, "--limit", "2", "--model", "unpriced-x", "--run-id", "ev", "--db",
                    str(tmp_path / "eval.duckdb"), env=_env(tmp_path, mock_server, prefect_api,
                                                            ENVSCALER_BUDGET__MAX_COST_USD="0.5"), cwd=tmp_path)
    assert_one_line_error(out, "budget.max_cost_usd=0.5", "--model='unpriced-x'", '[llm.prices."unpriced-x"]')
    assert _chat_requests(mock_server) == before


def test_a_cost_budget_refuses_the_unpriced_model_a_resumed_evaluation_keeps(
        mock_server: MockServer, prefect_api: str, tmp_path: Path) -> None:
    db = str(tmp_path / "eval.duckdb")
    first = envscaler(*LLM_EVAL, "--limit", "1", "--model", "unpriced-x", "--run-id", "ev", "--db", db,
                      env=_env(tmp_path, mock_server, prefect_api), cwd=tmp_path)
    assert first.returncode == 0, first.stderr[-3000:]
    before = _chat_requests(mock_server)
    again = envscaler(*LLM_EVAL, "--limit", "1", "--run-id", "ev", "--db", db,
                      env=_env(tmp_path, mock_server, prefect_api, ENVSCALER_BUDGET__MAX_COST_USD="0.5"), cwd=tmp_path)
    assert_one_line_error(again, "budget.max_cost_usd=0.5", "the model of run ev='unpriced-x'")
    assert _chat_requests(mock_server) == before


def test_an_evaluation_stopped_by_its_budget_prints_its_json_with_status_and_finished_tasks(
        mock_server: MockServer, prefect_api: str, tmp_path: Path) -> None:
    db = tmp_path / "eval.duckdb"
    out = envscaler(*LLM_EVAL, "--limit", "3", "--model", "mock-bfcl", "--run-id", "ev", "--db", str(db), "--json",
                    env=_env(tmp_path, mock_server, prefect_api, ENVSCALER_BUDGET__MAX_TOKENS="6000",
                             ENVSCALER_LLM__MAX_CONCURRENCY="1"), cwd=tmp_path)
    assert out.returncode == 3, out.stderr[-3000:]
    summary = json.loads(out.stdout)
    assert summary["status"] == "stopped_budget" and summary["run_id"] == "ev" and summary["complete"] is False
    assert summary["subsets"]["base"]["tasks"] == _finished(db, "ev")


def test_a_finished_evaluations_json_says_completed(mock_server: MockServer, prefect_api: str, tmp_path: Path) -> None:
    out = envscaler(*LLM_EVAL, "--limit", "1", "--model", "mock-bfcl", "--run-id", "ev", "--db",
                    str(tmp_path / "eval.duckdb"), "--json", env=_env(tmp_path, mock_server, prefect_api), cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-3000:]
    summary = json.loads(out.stdout)
    assert summary["status"] == "completed" and summary["subsets"]["base"] == {"tasks": 1, "valid": 1, "accuracy": 1.0}


def test_an_endpoint_without_usage_is_warned_about_once(mock_realism: Any, prefect_api: str, tmp_path: Path) -> None:
    mock = mock_realism("no_usage")
    out = envscaler(*LLM_EVAL, "--limit", "2", "--model", "mock-bfcl", "--run-id", "ev", "--db",
                    str(tmp_path / "eval.duckdb"), env=_env(tmp_path, mock, prefect_api), cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stderr.count("sends no `usage`") == 1, out.stderr[-3000:]
    assert "BFCL's own runs fail" in out.stderr
