"""Spec: `envscaler resume` as a user meets it after a budget stop. The endpoint, key and store come from
the resuming command's environment (said out loud when the endpoint changed); `--max-tokens` raises the
budget and the run keeps the raised value; a run the demo started resumes against the bundled mock LLM
started again (the port it used is long gone); a finished run is a no-op."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from envscaler_core.store import Store
from mock_llm.server import MockServer
from tests.cli.helpers import assert_no_noise, clean_env, envscaler

pytestmark = [pytest.mark.slow, pytest.mark.prefect]
TASKS = ['{"task": "What is the capital of France?"}', '{"task": "Tell me a joke about cats."}',
         '{"task": "Compute 17 times 23."}', '{"task": "Name three prime numbers."}']
DEAD_ENDPOINT = "http://127.0.0.1:9/v1"
RAISED = 10_000_000


def _budget_stopped(env: dict[str, str], tmp: Path, run_id: str, tasks: list[str]) -> Path:
    source = tmp / f"{run_id}.jsonl"
    source.write_text("\n".join(tasks) + "\n")
    stopping = {**env, "ENVSCALER_BUDGET__MAX_TOKENS": "1", "ENVSCALER_LLM__MAX_CONCURRENCY": "1",
                "ENVSCALER_FLOW__BATCH_SIZE": "1", "ENVSCALER_FLOW__BATCHES_IN_FLIGHT": "1", "ENVSCALER_MINE__LLM_BATCH": "1"}
    out = envscaler("run", "-s", str(source), "--run-id", run_id, "--quiet", env=stopping)
    assert out.returncode == 3, out.stderr[-3000:]
    return source


def _stored(env: dict[str, str], run_id: str) -> dict[str, Any]:
    return json.loads(envscaler("status", run_id, "--json", env=env).stdout)


@pytest.fixture(scope="module")
def user(prefect_api: str, mock_server: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("resume")
    (tmp / "home").mkdir()
    env = clean_env(tmp / "home", OPENAI_BASE_URL=mock_server.base_url, OPENAI_API_KEY="mock", PREFECT_API_URL=prefect_api)
    store = tmp / "home" / ".local" / "share" / "envscaler" / "envscaler.duckdb"
    return {"env": env, "tmp": tmp, "store": store}


def test_a_resume_takes_the_endpoint_from_the_environment_and_keeps_a_raised_budget(user: dict[str, Any]) -> None:
    _budget_stopped(user["env"], user["tmp"], "budgeted", TASKS)
    first = _stored(user["env"], "budgeted")
    assert first["status"] == "stopped_budget" and first["progress"]["resumed"] is False
    with MockServer() as other:
        env = {**user["env"], "OPENAI_BASE_URL": other.base_url}
        out = envscaler("resume", "budgeted", "--max-tokens", str(RAISED), env=env)
        answered = other.stats()["requests_total"]
    assert out.returncode == 4, out.stderr[-3000:]  # finished; nothing stateful in these tasks
    assert f"resuming with endpoint {other.base_url} (the run last used {user['env']['OPENAI_BASE_URL']})" in out.stderr
    assert answered >= 1
    assert_no_noise(out.stderr)
    with Store.from_url(str(user["store"]), create=False) as store:
        run = store.get_run("budgeted")
    assert run is not None and run.config["budget"]["max_tokens"] == RAISED
    assert run.config["llm"]["base_url"] == other.base_url and "api_key" not in run.config["llm"]
    # its step figures count the resumed invocation only, and say so (a red team read them as the run's)
    assert run.progress is not None and run.progress.resumed
    assert "steps (this invocation, which resumed the run" in envscaler("status", "budgeted", env=user["env"]).stdout


def test_a_finished_run_is_not_resumed(user: dict[str, Any]) -> None:
    out = envscaler("resume", "budgeted", env=user["env"])
    assert out.returncode == 0, out.stderr
    assert "run budgeted is already finished (it produced nothing): nothing to resume" in out.stdout


def test_a_demo_run_resumes_against_the_mock_started_again(user: dict[str, Any]) -> None:
    tasks = ['{"task": "Spell the word necessary."}', '{"task": "What is 2 plus 2?"}',
             '{"task": "Who wrote Hamlet?"}']
    _budget_stopped(user["env"], user["tmp"], "demo-like", tasks)
    with Store.from_url(str(user["store"])) as store:  # it writes: create=False opens read-only
        run = store.get_run("demo-like")
        assert run is not None
        config = {**run.config, "llm": {**run.config["llm"], "base_url": DEAD_ENDPOINT}}
        store.save_run(run.model_copy(update={"origin": "demo", "config": config}))
    env = {k: v for k, v in user["env"].items() if k not in ("OPENAI_BASE_URL", "OPENAI_API_KEY")}
    out = envscaler("resume", "demo-like", "--max-tokens", str(RAISED), env=env)
    assert out.returncode == 4, out.stderr[-3000:]
    assert "[demo] run demo-like resumes against the bundled MOCK LLM, started again at http://127.0.0.1:" in out.stderr
    assert _stored(user["env"], "demo-like")["funnel"]["source_tasks"] == 3
    assert_no_noise(out.stderr)
