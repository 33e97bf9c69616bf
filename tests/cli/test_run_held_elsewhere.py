"""Spec: a second `run` or `resume` of a run that another live process works on is refused, in one line
naming that process and how to shard instead, before anything is written or paid for.

On PostgreSQL two `envscaler run --run-id pgdup` used to both do the whole run and pay every LLM call
twice (an outside check: 718 calls for a 361-call run). The other process here is a real one holding
the run's claim (tests/store/test_claims.py). On DuckDB the first run holds the file: the second used
to wait 15 s, taking the run for a reader, then name only the file's lock."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from envscaler_core.models import Run
from envscaler_core.store import Store
from mock_llm.server import MockServer
from envscaler.store_claim import CLAIM_WAIT_S
from tests.cli.helpers import ENVSCALER, SLICE, SMALL_TOML, assert_one_line_error, clean_env, envscaler, wait_for_step


@pytest.fixture
def user(tmp_path: Path, mock_server: Any) -> dict[str, Any]:
    (tmp_path / "home").mkdir()
    return {"env": clean_env(tmp_path / "home", OPENAI_BASE_URL=mock_server.base_url, OPENAI_API_KEY="mock"),
            "tmp": tmp_path}


@pytest.mark.postgres
def test_a_second_run_of_a_run_held_on_postgres_is_refused_naming_its_owner(user: dict[str, Any],
                                                                           postgres_url: str) -> None:
    from tests.store.test_claims import _Holder

    holder = _Holder(postgres_url, "pgdup")
    try:
        out = envscaler("run", "-s", str(SLICE), "--run-id", "pgdup", "--db", postgres_url, env=user["env"], timeout=120)
    finally:
        holder.stop()
    assert_one_line_error(out, "run pgdup is already being worked on", f"envscaler pid {holder.proc.pid} on ",
                          "shard_index")
    with Store.from_url(postgres_url) as store:
        assert store.get_run("pgdup") is None, "nothing was written"
        assert store.llm_usage("pgdup") == {}


@pytest.mark.postgres
def test_a_resume_of_a_run_held_on_postgres_is_refused_and_leaves_the_run_alone(user: dict[str, Any],
                                                                               postgres_url: str) -> None:
    with Store.from_url(postgres_url) as store:
        store.save_run(Run(run_id="pgdup", status="interrupted", error="interrupted (Ctrl-C)", sources=[str(SLICE)]))
    from tests.store.test_claims import _Holder

    holder = _Holder(postgres_url, "pgdup")
    try:
        out = envscaler("resume", "pgdup", "--db", postgres_url, env=user["env"], timeout=120)
    finally:
        holder.stop()
    assert_one_line_error(out, "run pgdup is already being worked on", f"envscaler pid {holder.proc.pid} on ")
    with Store.from_url(postgres_url) as store:
        run = store.get_run("pgdup")
        assert run is not None and (run.status, run.error) == ("interrupted", "interrupted (Ctrl-C)")


@pytest.mark.slow
@pytest.mark.prefect
@pytest.mark.parametrize("backend", ["duckdb", pytest.param("postgres", marks=pytest.mark.postgres)])
def test_a_second_run_while_the_first_works_is_refused_at_once_naming_it(
        backend: str, slow_mock: MockServer, prefect_api: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    """Two real `envscaler run` of one run id, the second started while the first works (its progress
    shows a step running): the second stops in one line, the first goes on alone."""
    (tmp_path / "home").mkdir()
    (tmp_path / "f.toml").write_text(SMALL_TOML)
    db = tmp_path / "runs.duckdb"
    url = f"duckdb:///{db}" if backend == "duckdb" else request.getfixturevalue("postgres_url")
    env = clean_env(tmp_path / "home", OPENAI_BASE_URL=slow_mock.base_url, OPENAI_API_KEY="mock",
                    ENVSCALER_DB_URL=url, PREFECT_API_URL=prefect_api, ENVSCALER_DATA_DIR=str(tmp_path / "data"))
    progress = Path(f"{db}.progress") if backend == "duckdb" else tmp_path / "data" / "progress"
    first = subprocess.Popen([str(ENVSCALER), "run", "-s", str(SLICE), "-c", str(tmp_path / "f.toml"), "--run-id", "dup"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, stdin=subprocess.DEVNULL)
    try:
        wait_for_step(progress / "dup.json", first, "mine.judge")
        started = time.monotonic()
        second = envscaler("run", "-s", str(SLICE), "-c", str(tmp_path / "f.toml"), "--run-id", "dup", env=env,
                           timeout=120)
        took = time.monotonic() - started
        assert first.poll() is None, "the first run goes on"
    finally:
        first.kill()
        first.communicate()
    assert_one_line_error(second, "run dup is already being worked on", f"envscaler pid {first.pid} on ",
                          "shard_index", "shards need a PostgreSQL store" if backend == "duckdb" else "")
    # Waiting as for a reader takes CLAIM_WAIT_S and then some; the CLI's own start took up to 13 s at load 14.
    assert took < CLAIM_WAIT_S, f"it waited {took:.0f} s, as for a reader"


@pytest.mark.postgres
def test_an_import_under_a_run_id_held_on_postgres_is_refused_before_it_reads(user: dict[str, Any],
                                                                           postgres_url: str) -> None:
    """The import is stored whole or not at all, but two processes importing under one run id on
    PostgreSQL each wrote their own whole import into it."""
    from tests.store.test_claims import _Holder

    (user["tmp"] / "envs.json").write_text("{}")
    (user["tmp"] / "scenarios.json").write_text("[]")
    holder = _Holder(postgres_url, "pgimport")
    try:
        out = envscaler("import", "envscaler", "--envs", str(user["tmp"] / "envs.json"), "--scenarios",
                        str(user["tmp"] / "scenarios.json"), "--run-id", "pgimport", "--db", postgres_url,
                        env=user["env"], timeout=120)
    finally:
        holder.stop()
    assert_one_line_error(out, "run pgimport is already being worked on", f"envscaler pid {holder.proc.pid} on ")
    with Store.from_url(postgres_url) as store:
        assert store.get_run("pgimport") is None


@pytest.mark.postgres
@pytest.mark.prefect
def test_an_evaluation_held_on_postgres_is_refused_and_writes_nothing(user: dict[str, Any], postgres_url: str,
                                                                     prefect_api: str) -> None:
    """`eval bfcl-mt --run-id X` twice on PostgreSQL used to play and pay for every task twice."""
    from tests.store.test_claims import _Holder

    holder = _Holder(postgres_url, "pgeval")
    try:
        out = envscaler("eval", "bfcl-mt", "--limit", "1", "--run-id", "pgeval", "--db", postgres_url,
                        env={**user["env"], "PREFECT_API_URL": prefect_api}, timeout=180)
    finally:
        holder.stop()
    assert out.returncode == 2, (out.stdout[-2000:], out.stderr[-3000:])
    errors = [line for line in out.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1 and "run pgeval is already being worked on" in errors[0], out.stderr
    assert f"envscaler pid {holder.proc.pid} on " in errors[0] and "resume" not in errors[0]
    with Store.from_url(postgres_url) as store:
        assert store.get_run("pgeval") is None


HOLD_DUCKDB = """
import os, sys
from envscaler_core.models.progress import RunProgress
from envscaler_core.pipeline.progress import progress_path, write_text_atomic
from envscaler_core.store import Store
store = Store.from_url(sys.argv[1])
write_text_atomic(progress_path(sys.argv[1], sys.argv[2]), RunProgress(run_id=sys.argv[2], pid=os.getpid(),
                  store=sys.argv[1], status="running").model_dump_json())
print("held", flush=True)
sys.stdin.read()
"""


def test_a_resume_of_a_run_working_on_its_duckdb_file_is_refused_naming_it(user: dict[str, Any]) -> None:
    """It used to say only that the store was held (by the very run asked to resume), not that resuming
    a run that is still working is what was refused, nor how runs are split instead."""
    import sys

    url = f"duckdb:///{user['tmp'] / 'runs.duckdb'}"
    with Store.from_url(url) as store:
        store.save_run(Run(run_id="ddup", status="running", sources=[str(SLICE)]))
    holder = subprocess.Popen([sys.executable, "-c", HOLD_DUCKDB, url, "ddup"], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True, env=user["env"], cwd=Path(__file__).resolve().parents[2])
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        out = envscaler("resume", "ddup", "--db", url, env=user["env"], timeout=120)
    finally:
        holder.communicate("", timeout=30)
    assert_one_line_error(out, "run ddup is already being worked on", f"envscaler pid {holder.pid} on this host",
                          "shards need a PostgreSQL store")
