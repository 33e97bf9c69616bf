"""Spec: the factory flow, end to end on real API-Bank tasks, over the real mock LLM (HTTP), the real
sandbox, a real DuckDB file and a real Prefect server; re-running a run id repeats nothing."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from envscaler_core.config import public_config
from envscaler_core.models import AcceptedEnv, EnvCandidate, Scenario, SourceTask, Trajectory
from envscaler_core.store import Store
from flows.factory import factory_flow
from tests.fixtures.small_run import SMALL_RUN_GROUP
from tests.fixtures.llm import mock_llm_settings

pytestmark = [pytest.mark.prefect, pytest.mark.slow, pytest.mark.xdist_group(SMALL_RUN_GROUP)]

SLICE = Path(__file__).resolve().parents[2] / "envscaler_core" / "data" / "api_bank_lv3_slice.json"
SMALL = {"mine": {"max_tasks": 30, "select_n": 4}, "validate": {"mode": "both", "rounds": 6},
         "scen": {"per_env": 1}, "flow": {"batch_size": 5}}


def small_settings(tmp_path: Path, mock_server: Any, name: str = "f", llm: dict[str, Any] | None = None,
                   **extra: Any) -> dict[str, Any]:
    """A small run's config (flow parameters) on a DuckDB file `<name>.duckdb` and the session mock."""
    from envscaler_core.config import load_settings

    overrides = {**SMALL, "store": {"url": f"duckdb:///{tmp_path / (name + '.duckdb')}"},
                 "llm": mock_llm_settings(mock_server.base_url, **(llm or {})).model_dump(mode="json"),
                 "flow": {**SMALL["flow"], "out_dir": str(tmp_path / "out")}, **extra}
    return public_config(load_settings(environ={}, overrides=overrides))


def run(run_id: str, config: dict[str, Any], stages: list[str] | None = None) -> dict[str, Any]:
    return asyncio.run(factory_flow(run_id=run_id, sources=[str(SLICE)], config=config, stages=stages))


def counts(url: str, run_id: str) -> dict[str, int]:
    store = Store.from_url(url)
    try:
        return {m.__name__: len(store.query(m, run_id=run_id))
                for m in (SourceTask, EnvCandidate, AcceptedEnv, Scenario, Trajectory)}
    finally:
        store.close()


@pytest.fixture
def finished(small_factory_run: dict[str, Any]) -> dict[str, Any]:
    """The session's small run (tests/fixtures/small_run.py), shared with the operations specs."""
    return small_factory_run


def test_every_stage_of_the_funnel_produces_something(finished: dict[str, Any]) -> None:
    summary = finished["summary"]
    assert summary["status"] == "completed", summary
    funnel = summary["funnel"]
    for stage, n in funnel.items():
        assert n > 0, f"{stage} is empty: {funnel} / {summary['top_failures']}"


def test_defective_library_variants_are_rejected_with_a_reason(finished: dict[str, Any]) -> None:
    store = Store.from_url(finished["config"]["store"]["url"])
    try:
        rejected = store.query(EnvCandidate, run_id="e2e", where={"status": "rejected"})
    finally:
        store.close()
    assert all(c.failure_reason for c in rejected)


def test_rerunning_the_same_run_id_sends_no_llm_request_and_writes_no_row(finished: dict[str, Any], mock_server: Any) -> None:
    url = finished["config"]["store"]["url"]
    before_rows = counts(url, "e2e")
    before = mock_server.stats()["requests_total"]
    again = run("e2e", finished["config"])
    assert mock_server.stats()["requests_total"] == before, "a resumed finished run called the LLM again"
    assert counts(url, "e2e") == before_rows
    assert again["funnel"] == finished["summary"]["funnel"]


def test_exports_are_written_for_the_run(finished: dict[str, Any]) -> None:
    out = finished["tmp"] / "out" / "e2e"
    assert (out / "manifest.json").is_file(), sorted(p.name for p in out.glob("*")) if out.exists() else "no export dir"


@pytest.fixture(scope="module")
def finished_realistic(prefect_api: str, realistic_mock_server: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The same small run against a mock answering like real endpoints (realism `on`): forms drawn per
    request, env classes in other styles (EnvScaler's own among them) per class."""
    tmp = tmp_path_factory.mktemp("factory-realistic")
    config = small_settings(tmp, realistic_mock_server, name="r")
    realistic_mock_server.reset()
    summary = run("e2e-realistic", config)
    return {"summary": summary, "config": config, "stats": realistic_mock_server.stats()}


def test_answers_shaped_like_real_endpoints_give_the_same_funnel(finished: dict[str, Any],
                                                               finished_realistic: dict[str, Any]) -> None:
    realistic = finished_realistic["summary"]
    assert realistic["status"] == "completed", realistic
    assert realistic["funnel"] == finished["summary"]["funnel"], realistic["top_failures"]
    used = finished_realistic["stats"]["forms_used"]
    assert {"think", "reasoning_field", "prose_fence", "no_usage", "foreign_ids", "text_beside"} <= set(used), used


def test_env_classes_in_envscaler_style_are_accepted_with_their_state_loaded(finished_realistic: dict[str, Any]) -> None:
    store = Store.from_url(finished_realistic["config"]["store"]["url"])
    try:
        envs = store.query(AcceptedEnv, run_id="e2e-realistic")
        scenarios = store.query(Scenario, run_id="e2e-realistic", where={"status": "verified"})
    finally:
        store.close()
    styled = {e.env_id for e in envs if "self.init_config = init_config" in e.class_code}
    assert styled, [e.class_name for e in envs]
    assert any(s.env_id in styled for s in scenarios), "no verified scenario on an EnvScaler-style class"


def test_a_staged_run_reaches_the_same_records_as_the_streamed_default(finished: dict[str, Any], mock_server: Any) -> None:
    """Streaming changes when items move on, not what they become: the same candidates, verdicts, envs
    and scenarios as a run whose stages wait for each other (`flow.stream: false`)."""
    config = small_settings(finished["tmp"], mock_server, name="staged",
                            flow={**SMALL["flow"], "out_dir": str(finished["tmp"] / "out"), "stream": False})
    staged = run("staged", config)
    assert staged["funnel"] == finished["summary"]["funnel"], staged["top_failures"]

    def outcome(url: str, run_id: str) -> dict[str, Any]:
        store = Store.from_url(url)
        try:
            return {"candidates": sorted((c.fingerprint, c.status) for c in store.query(EnvCandidate, run_id=run_id)),
                    "envs": sorted(e.fingerprint for e in store.query(AcceptedEnv, run_id=run_id)),
                    "scenarios": sorted((s.fingerprint, s.status) for s in store.query(Scenario, run_id=run_id))}
        finally:
            store.close()

    assert outcome(config["store"]["url"], "staged") == outcome(finished["config"]["store"]["url"], "e2e")


def test_a_streamed_run_reports_one_progress_step_per_lane(finished_realistic: dict[str, Any]) -> None:
    from envscaler_core.models import Run

    store = Store.from_url(finished_realistic["config"]["store"]["url"])  # a run nothing re-runs
    try:
        run_row: Run | None = store.get_run("e2e-realistic")
    finally:
        store.close()
    assert run_row is not None and run_row.progress is not None
    steps = {s.name: s for s in run_row.progress.steps}
    for lane in ("synth", "validate", "scen", "rollout"):
        assert steps[lane].finished_at is not None and steps[lane].done == steps[lane].total > 0, steps[lane]
        assert steps[lane].llm_calls > 0, f"{lane} was charged no LLM call: {steps}"
    assert "validate.dedup" not in steps


def test_a_run_whose_sandbox_cannot_start_stops_after_the_step_in_progress(finished: dict[str, Any],
                                                                          mock_server: Any) -> None:
    """The sandbox starts beside ingest and mining (which need none); when it cannot start, the run
    stops at the end of the mining step in progress with the sandbox's own message, recorded on the
    run, and no later stage spends anything."""
    from envscaler_core.models import Run

    config = small_settings(finished["tmp"], mock_server, name="nosandbox",
                            sandbox={"python": "/nonexistent/python3"})
    with pytest.raises(Exception, match="sandbox.python=/nonexistent/python3: no such file"):
        run("nosandbox", config)
    store = Store.from_url(config["store"]["url"])
    try:
        row: Run | None = store.get_run("nosandbox")
        candidates = store.query(EnvCandidate, run_id="nosandbox")
    finally:
        store.close()
    assert row is not None and row.status == "failed" and row.stage == "mine.judge", row
    assert "/nonexistent/python3" in (row.error or "")
    assert candidates == []
