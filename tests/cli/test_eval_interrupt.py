"""Spec: Ctrl-C to `envscaler eval bfcl-mt` while its temporary Prefect server is still starting exits 130
and says nothing was recorded (not "finished tasks are kept": there are none, and no run to resume)."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import pytest

from tests.cli.helpers import ENVSCALER, assert_no_noise, clean_env, ctrl_c_reaches

pytestmark = [pytest.mark.slow]


def test_ctrl_c_before_the_evaluation_starts_says_nothing_was_recorded(tmp_path: Path) -> None:
    env = clean_env(tmp_path, ENVSCALER_DATA_DIR=str(tmp_path / "data"))
    proc = subprocess.Popen([str(ENVSCALER), "eval", "bfcl-mt", "--agent", "gold", "--limit", "1", "--run-id", "early"],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            stdin=subprocess.DEVNULL, start_new_session=True, preexec_fn=ctrl_c_reaches)
    seen = []
    for line in proc.stderr:  # the CLI says it is starting the server before it waits for it
        seen.append(line)
        if "starting a temporary API server" in line:
            break
    os.killpg(proc.pid, signal.SIGINT)  # what a terminal's Ctrl-C does: the whole foreground group
    out, err = proc.communicate(timeout=120)
    stderr = "".join(seen) + err
    assert proc.returncode == 130, stderr[-3000:]
    assert "interrupted before evaluation early started; nothing was recorded" in stderr
    assert "finished tasks are kept" not in stderr
    assert_no_noise(stderr)
