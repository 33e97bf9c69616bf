"""Spec: a run can be watched and stopped. While `envscaler run` works, `status` shows its live figures
(the run holds the DuckDB file); Ctrl-C to the whole process group, as a terminal sends it, stops it with
exit 130, the run marked interrupted and the resume command printed, no traceback, and no Prefect server
left behind; `envscaler resume` then completes it. No PREFECT_API_URL for the run: the CLI starts its own
server (the resume reports to the session's, to save starting a second one)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from mock_llm.server import MockServer
from tests.cli.helpers import ENVSCALER, SLICE, SMALL_TOML, assert_no_noise, clean_env, ctrl_c_reaches, envscaler, wait_for_step

pytestmark = [pytest.mark.slow]
RUN = "interrupt-me"


def prefect_servers_of(home: Path) -> list[int]:
    """Pids of Prefect API servers started with this PREFECT_HOME (an orphan would be one of them)."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmd = (proc / "cmdline").read_bytes()
            env = (proc / "environ").read_bytes()
        except OSError:
            continue
        if b"prefect.server.api.server:create_app" in cmd and f"PREFECT_HOME={home}".encode() in env:
            found.append(int(proc.name))
    return found


@pytest.fixture(scope="module")
def interrupted(slow_mock: MockServer, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("interrupt")
    (tmp / "home").mkdir()
    (tmp / "f.toml").write_text(SMALL_TOML)
    db = tmp / "runs.duckdb"
    slow_mock.set_faults(latency_ms=0)  # quick until validation, slow from there: still working at the signal
    env = clean_env(tmp / "home", OPENAI_BASE_URL=slow_mock.base_url, OPENAI_API_KEY="mock",
                    ENVSCALER_DB_URL=f"duckdb:///{db}")
    proc = subprocess.Popen([str(ENVSCALER), "run", "-s", str(SLICE), "-c", str(tmp / "f.toml"), "--run-id", RUN],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=tmp,
                            start_new_session=True,  # its own process group, like a terminal's foreground job
                            preexec_fn=ctrl_c_reaches)
    try:
        wait_for_step(Path(f"{db}.progress") / f"{RUN}.json", proc, "validate")
        slow_mock.set_faults(latency_ms=1500)
        during = {"one": envscaler("status", RUN, env=env), "list": envscaler("status", env=env)}
        assert proc.poll() is None, "the run ended before the interrupt: make the mock slower"
        started = time.monotonic()
        os.killpg(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=120)  # a functional bound ("it stops"), not a performance claim
        stopped_s = time.monotonic() - started
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    print(f"Ctrl-C to exit: {stopped_s:.2f} s")
    return {"env": env, "tmp": tmp, "code": proc.returncode, "stdout": out, "stderr": err, "during": during,
            "after": envscaler("status", RUN, "--json", env=env), "servers": prefect_servers_of(tmp / "home" / ".prefect")}


def test_status_shows_a_run_that_holds_the_store(interrupted: dict[str, Any]) -> None:
    one, listing = interrupted["during"]["one"], interrupted["during"]["list"]
    assert one.returncode == 0, one.stderr
    assert "held by the running process" in one.stdout and f"{RUN} running: " in one.stdout
    assert "mine.judge" in one.stdout and "LLM calls" in one.stdout
    assert listing.returncode == 0 and RUN in listing.stdout and "running" in listing.stdout, listing


def test_ctrl_c_exits_130_with_the_resume_command(interrupted: dict[str, Any]) -> None:
    assert interrupted["code"] == 130, interrupted["stderr"][-3000:]
    assert f"envscaler resume {RUN}" in interrupted["stderr"]
    # the run's store is not the default one: the hint names it, so pasting it anywhere continues this run
    assert f"resume {RUN} --db duckdb:///{interrupted['tmp'] / 'runs.duckdb'}" in interrupted["stderr"]
    assert_no_noise(interrupted["stderr"])


def test_the_wait_for_a_temporary_prefect_server_is_said_out_loud(interrupted: dict[str, Any]) -> None:
    """Starting one takes 30-60 s on a small machine: the user is told before, and how to skip it."""
    stderr = interrupted["stderr"]
    assert "Prefect: starting a temporary API server for this command (usually 30-60 s;" in stderr
    assert "`envscaler demo` leaves one that later commands reuse" in stderr
    assert stderr.index("starting a temporary API server") < stderr.index("Prefect: ready after ")


def test_the_run_is_marked_interrupted_and_no_server_is_left(interrupted: dict[str, Any]) -> None:
    after = json.loads(interrupted["after"].stdout)
    assert after["status"] == "interrupted" and "resume" in after["error"]
    assert after["funnel"]["source_tasks"] == 24  # what the stop kept; how far it got depends on the machine
    assert interrupted["servers"] == []


def test_resume_completes_the_interrupted_run(interrupted: dict[str, Any], prefect_api: str,
                                              slow_mock: MockServer) -> None:
    """On the session's Prefect server (the run above showed a temporary one started and stopped), with
    quick answers: what is specified is that the resume completes the run, not how long it waits."""
    slow_mock.set_faults(latency_ms=0)
    env = {**interrupted["env"], "PREFECT_API_URL": prefect_api}
    out = envscaler("resume", RUN, "--quiet", env=env, cwd=interrupted["tmp"])
    assert out.returncode == 0, out.stderr[-3000:]
    assert f"run {RUN}: completed" in out.stdout and "report: " in out.stdout and "exports: " in out.stdout
    assert_no_noise(out.stderr)
    shown = envscaler("status", RUN, env=env)
    assert f"run {RUN}: completed" in shown.stdout and "envs: env_" in shown.stdout
    stopped, finished = (json.loads(status.stdout)["funnel"]
                         for status in (interrupted["after"], envscaler("status", RUN, "--json", env=env)))
    assert any(finished[stage] > count for stage, count in stopped.items()), (stopped, finished)
