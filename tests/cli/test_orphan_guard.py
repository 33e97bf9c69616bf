"""Spec: a child run under `envscaler.orphan_guard` (the temporary Prefect server is) stops when the
process that started it is SIGKILLed, although it runs in its own session; while its parent lives it runs."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

PARENT = """
import os, subprocess, sys, time
child = subprocess.Popen([sys.executable, "-m", "envscaler.orphan_guard", str(os.getpid()), "http.server", "0",
                          "--bind", "127.0.0.1"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         start_new_session=True)
print(child.pid, flush=True)
time.sleep(600)
"""


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as fh:  # a zombie (exited, not yet reaped by init) is gone too
        return fh.read().rsplit(")", 1)[1].split()[0] != "Z"


def gone_soon(pid: int, bound_s: float = 60) -> bool:
    """Whether `pid` exits within `bound_s` (a bound for a loaded machine, not a performance claim)."""
    deadline = time.monotonic() + bound_s
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    return not alive(pid)


@pytest.fixture
def parent_and_child():
    parent = subprocess.Popen([sys.executable, "-c", PARENT], stdout=subprocess.PIPE, text=True)
    child = int(parent.stdout.readline())
    yield parent, child
    for pid in (parent.pid, child):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    parent.wait()


def test_the_child_runs_while_its_parent_lives(parent_and_child) -> None:
    _, child = parent_and_child
    time.sleep(2)
    assert alive(child)


def test_the_child_stops_when_its_parent_is_sigkilled(parent_and_child) -> None:
    parent, child = parent_and_child
    parent.kill()
    parent.wait()
    assert gone_soon(child)


COMMAND = """
import os, tempfile
os.environ["PREFECT_HOME"] = tempfile.mkdtemp()
from envscaler.prefect_server import start_temporary_server
server = start_temporary_server()
print(server.pid, flush=True)
import time; time.sleep(600)
"""


@pytest.mark.slow
def test_a_sigkilled_commands_temporary_prefect_server_stops_too(tmp_path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_")}
    command = subprocess.Popen([sys.executable, "-c", COMMAND], stdout=subprocess.PIPE, text=True, env=env)
    server = int(command.stdout.readline())
    try:
        assert alive(server)
        command.kill()
        command.wait()
        assert gone_soon(server)
    finally:
        command.kill()
        try:
            os.kill(server, signal.SIGKILL)
        except ProcessLookupError:
            pass
