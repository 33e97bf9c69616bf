"""Spec: a second Ctrl-C (or `kill PID`) while a run stops does not cut the stop grace. The first signal
stops the run; the answers already on their way are still recorded, so the resume does not pay for them
again. The second is answered with one line and ignored (a third would quit at once). Before, asyncio's
own handler raised KeyboardInterrupt on the second Ctrl-C and, of 19 answers that arrived after the
first, only the 4 before the second were recorded."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine, text

from mock_llm.http_state import FaultConfig
from mock_llm.server import MockServer
from tests.cli.helpers import ROOT, SLICE, SMALL_TOML, assert_no_noise, clean_env, ctrl_c_reaches, wait_for_step

pytestmark = [pytest.mark.slow]


def _stopped_twice(tmp: Path, signum: int, prefect_api: str) -> dict[str, Any]:
    """A run stopped by two `signum` 0.3 s apart to its process group, answers taking 2.5-4.5 s (within
    the 5 s grace) once validation began (quick before it, so the run gets there in seconds); what the
    mock answered and what the store recorded. The run reports to the session's Prefect server: what is
    stopped is the run, not a temporary server (tests/cli/test_interrupt.py stops one of those)."""
    (tmp / "home").mkdir()
    (tmp / "f.toml").write_text(SMALL_TOML)
    db = tmp / "runs.duckdb"
    with MockServer(faults=FaultConfig(seed=7)) as mock:
        env = clean_env(tmp / "home", OPENAI_BASE_URL=mock.base_url, OPENAI_API_KEY="mock",
                        ENVSCALER_DB_URL=f"duckdb:///{db}", PYTHONPATH=str(ROOT), PREFECT_API_URL=prefect_api)
        proc = subprocess.Popen([sys.executable, "-m", "envscaler.cli", "run", "-s", str(SLICE), "-c",
                                 str(tmp / "f.toml"), "--run-id", "twice"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT,
                                start_new_session=True, preexec_fn=ctrl_c_reaches)
        try:
            wait_for_step(Path(f"{db}.progress") / "twice.json", proc, "validate")
            mock.set_faults(latency_ms=2500, latency_jitter_ms=2000)
            time.sleep(3)  # judge calls under way
            os.killpg(proc.pid, signum)
            time.sleep(0.3)
            os.killpg(proc.pid, signum)
            out, err = proc.communicate(timeout=120)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        stats = mock.stats()
    engine = create_engine(f"duckdb:///{db}")
    with engine.connect() as conn:
        recorded = conn.execute(text("SELECT count(*) FROM llm_calls WHERE status = 'ok' AND stage <> 'embedding'")).scalar_one()
    engine.dispose()
    return {"code": proc.returncode, "stderr": err, "answered": stats["by_path"].get("/v1/chat/completions", 0),
            "recorded": recorded}


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["two-ctrl-c", "two-sigterm"])
def test_a_second_signal_while_stopping_keeps_every_answer_on_its_way(tmp_path: Path, signum: int,
                                                                     prefect_api: str) -> None:
    seen = _stopped_twice(tmp_path, signum, prefect_api)
    assert seen["code"] == (130 if signum == signal.SIGINT else 143), seen["stderr"][-3000:]
    assert seen["answered"] > 0 and seen["recorded"] == seen["answered"], seen
    assert "still stopping: recording the answers already on their way (at most 6 s)" in seen["stderr"]
    assert_no_noise(seen["stderr"])
