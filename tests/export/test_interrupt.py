"""Spec: Ctrl-C during `envscaler export` removes the export's temporary files, says what was and was
not written (no manifest.json: the export is incomplete) and exits 130; it used to exit 130 (or 1 with
"unexpected RuntimeError: Query interrupted") without a word about the files. A real CLI process on a
real DuckDB store big enough that the interrupt lands while the RL files are being written."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from typing import Any

import pytest

from envscaler_core.models import Run
from envscaler_core.store import Store
from tests.cli.helpers import ctrl_c_reaches
from tests.export.records import verified
from tests.scenarios.helpers import library_env, scenario

RUN = "big-export"


@pytest.fixture(scope="module")
def interrupted(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("export-interrupt")
    db = tmp / "big.duckdb"
    with Store.from_url(f"duckdb:///{db}") as store:
        store.save_run(Run(run_id=RUN))
        base = verified(scenario())
        store.upsert([library_env(), *(base.model_copy(update={"task": f"Lend Dune to reader {i}. " + "x" * 2000})
                                       for i in range(8000))], RUN)
    out = tmp / "out"
    proc = subprocess.Popen([sys.executable, "-m", "envscaler.cli", "export", RUN, "--db", str(db), "--out", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                            preexec_fn=ctrl_c_reaches)
    try:
        deadline = time.monotonic() + 120
        while not list((out / RUN).glob(".rl_scenarios*.tmp-*")) if (out / RUN).is_dir() else True:
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
            time.sleep(0.005)
        assert proc.poll() is None, "the export finished before the interrupt: make the store bigger"
        os.killpg(proc.pid, signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    return {"code": proc.returncode, "stdout": stdout, "stderr": stderr, "dir": out / RUN}


def test_an_interrupted_export_exits_130(interrupted: dict[str, Any]) -> None:
    assert interrupted["code"] == 130, interrupted["stderr"]


def test_an_interrupted_export_leaves_no_temporary_files(interrupted: dict[str, Any]) -> None:
    assert [p.name for p in interrupted["dir"].iterdir() if ".tmp-" in p.name] == []


def test_an_interrupted_export_says_it_is_incomplete_and_what_was_written(interrupted: dict[str, Any]) -> None:
    err = interrupted["stderr"]
    assert "Traceback" not in err and "unexpected" not in err
    assert f"interrupted: export of run {RUN} to {interrupted['dir']} is incomplete" in err
    assert "manifest.json was not written" in err and "envs.jsonl" in err and "rl_scenarios.jsonl" not in err.split(
        "written before the interrupt:")[1].split(";")[0]
    assert not (interrupted["dir"] / "manifest.json").exists()
