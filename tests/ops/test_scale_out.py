"""Spec: the factory scales out over a Prefect process work pool on a shared Postgres store.

Real processes throughout: the session Prefect server, a session PostgreSQL, the mock LLM over HTTP,
`prefect deploy` of the repository's own deployments/prefect.yaml, and two `prefect worker start`
subprocesses. Mining runs once; then the two shards of the later stages run at the same time, one
per worker (each worker serves its own work queue, so the placement is deterministic), and the
store is checked for a complete, duplicate-free result.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from envscaler_core.models import AcceptedEnv, EnvCandidate, EnvTopic, Scenario, Trajectory
from envscaler_core.store import Store
from tests.ops.processes import Managed, survivors

pytestmark = [pytest.mark.slow, pytest.mark.prefect, pytest.mark.postgres]

REPO = Path(__file__).resolve().parents[2]
PREFECT_YAML = REPO / "deployments" / "prefect.yaml"
SHARDS = 2
RUN_ID = "scale-out"
# Small and fast: the mock LLM answers instantly; one sandbox worker per flow run on a 2-core box.
CONFIG: dict[str, Any] = {
    "mine": {"max_tasks": 30, "select_n": 4},
    "validate": {"mode": "both", "rounds": 6},
    "scen": {"per_env": 1},
    "flow": {"batch_size": 2},
    "sandbox": {"workers": 1},
    "llm": {"backoff_base_s": 0.05, "backoff_max_s": 2.0, "timeout_s": 10.0, "max_retries": 3},
}
RUN_DEADLINE_S = 240.0
LOGS_DEADLINE_S = 60.0


def _pool_name() -> str:
    spec = yaml.safe_load(PREFECT_YAML.read_text())
    pools = {d["work_pool"]["name"] for d in spec["deployments"]}
    assert len(pools) == 1, f"prefect.yaml deployments use several pools: {pools}"
    return pools.pop()


@pytest.fixture(scope="module")
def factory_db(postgres_server: Any) -> Iterator[str]:
    """One database for the module's single scaled-out run (the per-test `postgres_url` is too short-lived)."""
    with postgres_server.fresh_database("ops") as url:
        yield url


def _deploy(env: dict[str, str], pool: str) -> None:
    """Register the repository's deployments exactly as an operator would (`prefect deploy --all`)."""
    import subprocess

    prefect = str(Path(sys.executable).with_name("prefect"))
    subprocess.run([prefect, "--no-prompt", "work-pool", "create", pool, "--type", "process", "--overwrite"],
                   cwd=REPO, env=env, check=True, capture_output=True, timeout=120)
    done = subprocess.run([prefect, "--no-prompt", "deploy", "--all", "--prefect-file", str(PREFECT_YAML)],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, f"prefect deploy failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"


async def _run_all(pool: str, workers: list[Managed]) -> dict[str, Any]:
    """Mine once on worker 0, then both shards at once, one per worker queue; wait for all."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import LogFilter, LogFilterFlowRunId
    from prefect.deployments import run_deployment

    async def start(deployment: str, queue: str, parameters: dict[str, Any]) -> Any:
        return await run_deployment(deployment, parameters=parameters, work_queue_name=queue, timeout=0,
                                    as_subflow=False)

    async def finish(client: Any, ids: list[Any]) -> list[Any]:
        deadline = time.monotonic() + RUN_DEADLINE_S
        while True:
            runs = [await client.read_flow_run(i) for i in ids]
            if all(r.state is not None and r.state.is_final() for r in runs):
                return runs
            dead = [w.argv[-1] for w in workers if not w.alive()]
            if dead or time.monotonic() > deadline:
                states = [(r.name, r.state_name) for r in runs]
                logs = "\n".join(w.output()[-2500:] for w in workers)
                pytest.fail(f"flow runs {states} not final (workers died: {dead}) after {RUN_DEADLINE_S}s:\n{logs}")
            await asyncio.sleep(1.0)

    async def logs_of(client: Any, run_id: Any, expect: str = "") -> str:
        """The run's logs. A run's state turns final before its process has sent its last batch of
        logs (they go out every couple of seconds and at exit), so wait, for a while, for `expect`."""
        deadline = time.monotonic() + LOGS_DEADLINE_S
        while True:
            lines = await client.read_logs(log_filter=LogFilter(flow_run_id=LogFilterFlowRunId(any_=[run_id])),
                                           limit=200)
            text = "\n".join(line.message for line in lines)
            if expect in text or time.monotonic() > deadline:
                return text
            await asyncio.sleep(1.0)

    async with get_client() as client:
        mine = await start("envscaler-factory/factory", "shard-0",
                           {"run_id": RUN_ID, "config": CONFIG, "stages": ["mine"]})
        [mined] = await finish(client, [mine.id])
        assert mined.state.is_completed(), f"mine run {mined.state_name}:\n{await logs_of(client, mined.id)}"
        shard_runs = [await start("envscaler-factory/shard", f"shard-{i}",
                                  {"run_id": RUN_ID, "config": CONFIG, "shard_index": i, "shard_count": SHARDS})
                      for i in range(SHARDS)]
        shards = await finish(client, [r.id for r in shard_runs])
        shard_logs = [await logs_of(client, r.id, expect="synth: ") for r in shards]
        for run, text in zip(shards, shard_logs):
            assert run.state.is_completed(), f"shard run {run.name} {run.state_name}:\n{text}"
        from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterKey

        artifacts = await client.read_artifacts(artifact_filter=ArtifactFilter(key=ArtifactFilterKey(any_=[f"funnel-{RUN_ID}"])))
    return {"mine": mined, "shards": shards, "shard_logs": shard_logs, "artifacts": artifacts, "pool": pool}


@pytest.fixture(scope="module")
def scaled(prefect_api: str, factory_db: str, mock_server: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("scale-out")
    pool = _pool_name()
    marker = f"envscaler-ops-{uuid.uuid4().hex}"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ENVSCALER_", "OPENAI_"))}
    env.update(PREFECT_API_URL=prefect_api, PREFECT_HOME=str(tmp / "prefect-home"), ENVSCALER_HOME=str(REPO),
               ENVSCALER_DB_URL=factory_db, OPENAI_BASE_URL=mock_server.base_url, OPENAI_API_KEY="mock",
               PREFECT_WORKER_QUERY_SECONDS="1", PREFECT_WORKER_HEARTBEAT_SECONDS="5",
               ENVSCALER_OPS_MARKER=marker, ENVSCALER_DATA_DIR=str(tmp / "data"))  # progress files: not in ~
    _deploy(env, pool)
    prefect = str(Path(sys.executable).with_name("prefect"))
    workers = [Managed([prefect, "worker", "start", "--pool", pool, "--type", "process",
                        "--work-queue", f"shard-{i}", "--name", f"ops-worker-{i}"],
                       env=env, cwd=REPO, log=tmp / f"worker-{i}.log") for i in range(SHARDS)]
    try:
        for w in workers:
            w.start()
        facts = asyncio.run(_run_all(pool, workers))
    finally:
        codes = [w.stop() for w in workers]
    facts.update(worker_logs=[w.output() for w in workers], worker_names=[w.argv[-1] for w in workers],
                 exit_codes=codes, survivors=survivors(marker), store_url=factory_db)
    return facts


def _rows(url: str, model: type[Any]) -> list[Any]:
    store = Store.from_url(url)
    try:
        return store.query(model, run_id=RUN_ID)
    finally:
        store.close()


def test_each_shard_ran_in_a_different_worker(scaled: dict[str, Any]) -> None:
    names, shards = scaled["worker_names"], scaled["shards"]
    for i, (run, text) in enumerate(zip(shards, scaled["shard_logs"])):
        assert f"Worker '{names[i]}' submitting flow run '{run.id}'" in text, text[-2000:]
        assert str(run.id) in scaled["worker_logs"][i], f"{names[i]} never mentions {run.id}"
    pids = [run.infrastructure_pid for run in shards]
    assert all(pids) and len(set(pids)) == SHARDS, pids


def test_both_shards_did_part_of_the_work(scaled: dict[str, Any]) -> None:
    """The fingerprint partition gives each shard some candidates, and none to both."""
    for text in scaled["shard_logs"]:
        assert "synth: nothing pending" not in text, text[-2000:]
        assert "synth: " in text and " done," in text, text[-2000:]


def test_every_selected_topic_got_exactly_one_candidate(scaled: dict[str, Any]) -> None:
    selected = {t.fingerprint for t in _rows(scaled["store_url"], EnvTopic) if t.selected}
    per_topic = Counter(c.topic_fp for c in _rows(scaled["store_url"], EnvCandidate))
    assert selected, "mining selected no topic"
    assert dict(per_topic) == {fp: 1 for fp in selected}


def test_no_record_is_stored_twice(scaled: dict[str, Any]) -> None:
    for model in (EnvTopic, EnvCandidate, AcceptedEnv, Scenario, Trajectory):
        fps = [r.fingerprint for r in _rows(scaled["store_url"], model)]
        assert len(fps) == len(set(fps)), f"{model.__name__}: {len(fps) - len(set(fps))} duplicate rows"
    envs = [e.env_id for e in _rows(scaled["store_url"], AcceptedEnv)]
    assert len(envs) == len(set(envs)), envs


def test_every_accepted_env_has_scenarios(scaled: dict[str, Any]) -> None:
    envs = {e.env_id for e in _rows(scaled["store_url"], AcceptedEnv)}
    with_scenarios = {s.env_id for s in _rows(scaled["store_url"], Scenario)}
    assert envs, "no environment was accepted"
    assert envs <= with_scenarios, f"accepted envs without scenarios: {sorted(envs - with_scenarios)}"


def test_the_funnel_is_published_and_non_empty(scaled: dict[str, Any]) -> None:
    store = Store.from_url(scaled["store_url"])
    try:
        funnel = store.funnel(RUN_ID)
    finally:
        store.close()
    assert funnel and all(n > 0 for n in funnel.values()), funnel
    assert scaled["artifacts"], f"no funnel-{RUN_ID} artifact on the Prefect server"
    assert any("| stage | count |" in (a.data or "") for a in scaled["artifacts"]), scaled["artifacts"]


def test_teardown_leaves_no_process_behind(scaled: dict[str, Any]) -> None:
    assert scaled["survivors"] == [], f"processes outlived their worker: {scaled['survivors']}"
    assert all(code is not None for code in scaled["exit_codes"]), scaled["exit_codes"]
