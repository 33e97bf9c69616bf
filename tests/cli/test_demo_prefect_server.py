"""Spec: the Prefect server `envscaler demo` starts is never left behind unrecorded. Ctrl-C while it is
still coming up stops it (it runs in its own session, out of reach of the terminal's Ctrl-C) and says
so; a demo run again while the server an earlier demo started still answers keeps that server's pid on
record, so the demo still says it is the demo's own and how to stop it."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.cli.helpers import ENVSCALER, clean_env, ctrl_c_reaches, envscaler

pytestmark = [pytest.mark.slow, pytest.mark.prefect]


def _servers_on(port: int) -> list[int]:
    """Live processes whose command line is a Prefect server on `port`."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z" and str(port).encode() in argv and any(b"prefect" in a or b"uvicorn" in a for a in argv):
            found.append(int(entry.name))
    return found


def test_ctrl_c_while_the_demos_server_starts_stops_that_server_and_says_so(tmp_path: Path) -> None:
    from envscaler.prefect_server import free_port

    (tmp_path / "home").mkdir()
    port = free_port()
    proc = subprocess.Popen([str(ENVSCALER), "demo", "--workdir", str(tmp_path / "work"), "--prefect-port", str(port)],
                            env=clean_env(tmp_path / "home"), cwd=tmp_path, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=ctrl_c_reaches)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("[demo] Prefect: looking for a local server"), line
        deadline = time.monotonic() + 30  # until the server process exists (it takes 30-60 s to answer)
        while not _servers_on(port) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert _servers_on(port), "the demo started no server"
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, (out, err)
    said = re.search(r"\[demo\] interrupted while the Prefect server it started was coming up: stopped it "
                     rf"\(pid (\d+)\); nothing is left running on 127.0.0.1:{port}", err)
    assert said, err
    assert _servers_on(port) == []
    assert not (tmp_path / "home" / ".local" / "share" / "envscaler" / "prefect-server.json").exists()


def test_a_demo_run_again_keeps_the_record_of_the_server_an_earlier_demo_started(tmp_path: Path,
                                                                                  prefect_api: str) -> None:
    """The session's server stands for the one an earlier demo started; a live pid stands for its pid."""
    (tmp_path / "home").mkdir()
    data = tmp_path / "home" / ".local" / "share" / "envscaler"
    data.mkdir(parents=True)
    pid = os.getpid()
    (data / "prefect-server.json").write_text(json.dumps(
        {"api_url": prefect_api, "pid": pid, "started_by": "`envscaler demo`"}))
    port = prefect_api.removesuffix("/api").rsplit(":", 1)[1]
    out = envscaler("demo", "--max-tasks", "4", "--quiet", "--workdir", str(tmp_path / "work"), "--prefect-port", port,
                    env=clean_env(tmp_path / "home"), cwd=tmp_path, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    ui = prefect_api.removesuffix("/api")
    assert f"[demo] Prefect: reporting to the server an earlier demo started at {ui} (pid {pid})" in out.stdout
    assert "not started by the demo" not in out.stdout
    assert f"started by the demo, pid {pid}, stop it with `kill {pid}`" in out.stdout
    assert json.loads((data / "prefect-server.json").read_text())["pid"] == pid
