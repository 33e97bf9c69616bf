"""Spec: shards may run at different times and still leave nothing behind, and the run's status says
whether all of them have done their part.

The scale-out spec runs its shards at the same time; here shard 0 runs to completion before shard 1
starts (a slow worker, a late trigger, or a shard that failed), in this process over a DuckDB file.
Each shard must carry its own topics through every stage, so the second shard finds nothing the first
one left to it. Until the second has run, the run is not `completed`: it is `interrupted`, naming the
shard whose items no shard has tried (each shard used to mark the whole run completed when its own
pass ended). On PostgreSQL, a shard that ends while another shard's process still works on the run
leaves it `running`: the last one settles it.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from envscaler_core.config import load_settings, public_config
from envscaler_core.models import AcceptedEnv, EnvCandidate, EnvTopic, Scenario, Trajectory
from envscaler_core.store import Store
from flows.factory import factory_flow, in_shard
from tests.fixtures.llm import mock_llm_settings

pytestmark = [pytest.mark.prefect, pytest.mark.slow]

SLICE = Path(__file__).resolve().parents[2] / "envscaler_core" / "data" / "api_bank_lv3_slice.json"
LATER = ["synth", "validate", "scen", "rollout"]
RUN_ID = "late-shard"


def _rows(url: str) -> dict[str, Any]:
    with Store.from_url(url) as store:
        rows: dict[str, Any] = {m.__name__: store.query(m, run_id=RUN_ID)
                                for m in (EnvTopic, EnvCandidate, AcceptedEnv, Scenario, Trajectory)}
        rows["run"] = store.get_run(RUN_ID)
    return rows


@pytest.fixture(scope="module")
def sequential(prefect_api: str, mock_server: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("sharding")
    url = f"duckdb:///{tmp / 'f.duckdb'}"
    overrides = {"mine": {"max_tasks": 30, "select_n": 4}, "validate": {"mode": "both", "rounds": 6},
                 "scen": {"per_env": 1}, "flow": {"batch_size": 2}, "store": {"url": url},
                 "llm": mock_llm_settings(mock_server.base_url).model_dump(mode="json")}
    config = public_config(load_settings(environ={}, overrides=overrides))

    def run(stages: list[str], index: int = 0, count: int = 1) -> None:
        asyncio.run(factory_flow(run_id=RUN_ID, sources=[str(SLICE)], config=config, stages=stages,
                                 shard_index=index, shard_count=count))

    run(["mine"])
    run(LATER, 0, 2)
    after_first = _rows(url)
    run(LATER, 1, 2)
    return {"after_first": after_first, "final": _rows(url)}


def test_the_first_shard_only_touches_its_own_topics(sequential: dict[str, Any]) -> None:
    rows = sequential["after_first"]
    selected = [t.fingerprint for t in rows["EnvTopic"] if t.selected]
    mine = {fp for fp in selected if in_shard(fp, (0, 2))}
    assert mine and len(mine) < len(selected), "the data no longer splits over two shards; pick another select_n"
    assert {c.topic_fp for c in rows["EnvCandidate"]} == mine


def test_after_both_shards_no_candidate_awaits_validation(sequential: dict[str, Any]) -> None:
    rows = sequential["final"]
    waiting = [c.class_name for c in rows["EnvCandidate"] if c.status in ("generated", "validating")]
    assert waiting == []
    assert {c.topic_fp for c in rows["EnvCandidate"]} == {t.fingerprint for t in rows["EnvTopic"] if t.selected}


def test_after_both_shards_every_accepted_env_has_scenarios(sequential: dict[str, Any]) -> None:
    rows = sequential["final"]
    envs = {e.env_id for e in rows["AcceptedEnv"]}
    assert envs and envs <= {s.env_id for s in rows["Scenario"]}


def test_after_both_shards_every_verified_scenario_was_rolled_out(sequential: dict[str, Any]) -> None:
    rows = sequential["final"]
    verified = {s.fingerprint for s in rows["Scenario"] if s.status == "verified"}
    assert verified and verified <= {t.scenario_fp for t in rows["Trajectory"]}


def test_after_the_first_shard_alone_the_run_is_not_completed(sequential: dict[str, Any]) -> None:
    run = sequential["after_first"]["run"]
    assert run.status == "interrupted", run.error
    assert "shard 0 of 2 finished its part, but shard(s) 1 did not" in run.error
    assert "synth" in run.error and f"envscaler resume {RUN_ID}" in run.error


def test_after_both_shards_the_run_is_completed(sequential: dict[str, Any]) -> None:
    run = sequential["final"]["run"]
    assert (run.status, run.error) == ("completed", None)


@pytest.mark.postgres
def test_a_shard_that_ends_while_another_works_leaves_the_run_running(
        prefect_api: str, mock_server: Any, postgres_url: str) -> None:
    """The other shard's process is a real one holding its claim (tests/store/test_claims.py)."""
    from tests.store.test_claims import _Holder

    overrides = {"mine": {"max_tasks": 30, "select_n": 4}, "flow": {"batch_size": 2}, "store": {"url": postgres_url},
                 "llm": mock_llm_settings(mock_server.base_url).model_dump(mode="json")}
    config = public_config(load_settings(environ={}, overrides=overrides))

    def run(stages: list[str], index: int = 0, count: int = 1) -> None:
        asyncio.run(factory_flow(run_id=RUN_ID, sources=[str(SLICE)], config=config, stages=stages,
                                 shard_index=index, shard_count=count))

    run(["mine"])
    other = _Holder(postgres_url, RUN_ID, (1, 2))
    try:
        run(["synth"], 0, 2)
        with Store.from_url(postgres_url) as store:
            assert store.get_run(RUN_ID).status == "running"
    finally:
        other.stop()
    run(["synth"], 1, 2)
    with Store.from_url(postgres_url) as store:
        assert store.get_run(RUN_ID).status == "completed"
