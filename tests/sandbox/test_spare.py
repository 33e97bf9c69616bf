"""Spec: an episode opened with `spare=True` holds a clean spare process for `open_spare`.

The spare is a second member of the same unit, forked before the unit got any code: an episode in it
costs a fork instead of a new unit (a BFCL task plays in the member and scores in the spare). What must
hold: the spare has run nothing of the first episode (patched builtins, module globals), the first
episode cannot signal or otherwise reach it, it is verified and hardened like any member, it is used
at most once (a second `open_spare` gets a new unit), and nothing of it outlives the episode.
"""

from __future__ import annotations

import time
from pathlib import Path

from sandbox import SandboxPool
from tests.sandbox.helpers import children_of, steady_process_count

PROBE = '''
import builtins, os, signal, sys


class Probe:
    def __init__(self, config=None):
        self.pid = os.getpid()
        self.patched = getattr(builtins, "PATCHED_BY_FIRST_EPISODE", None)
        self.module_mark = getattr(sys.modules.get("os"), "MARK", None)

    def patch(self):
        builtins.PATCHED_BY_FIRST_EPISODE = "yes"
        os.MARK = "first"
        return True

    def kill_pid(self, pid: int):
        try:
            os.kill(pid, signal.SIGKILL)
            return "killed"
        except OSError as exc:
            return type(exc).__name__

    def ping(self):
        return "pong"
'''


def _status(host_pid: int) -> dict[str, str]:
    lines = Path(f"/proc/{host_pid}/status").read_text().splitlines()
    return dict(line.split(":\t", 1) for line in lines if ":\t" in line)


def test_the_spare_has_run_nothing_of_the_first_episode(jail: SandboxPool) -> None:
    with jail.open_episode(PROBE, "Probe", None, spare=True) as first:
        assert first.call("patch", {}).ok
        with first.open_spare(PROBE, "Probe", None) as spare:
            assert spare.state == {"pid": 2, "patched": None, "module_mark": None}
            assert spare.host_pid != first.host_pid


def test_the_first_episode_cannot_signal_its_spare(jail: SandboxPool) -> None:
    with jail.open_episode(PROBE, "Probe", None, spare=True) as first:
        assert first.state["pid"] == 1
        assert first.call("kill_pid", {"pid": 2}).result == "PermissionError"
        with first.open_spare(PROBE, "Probe", None) as spare:
            assert spare.call("ping", {}).result == "pong"
            assert spare.restarts == 0


def test_the_spare_is_hardened_and_verified_like_a_member(jail: SandboxPool) -> None:
    with jail.open_episode(PROBE, "Probe", None, spare=True) as first:
        with first.open_spare(PROBE, "Probe", None) as spare:
            assert spare.host_pid is not None and first.host_pid is not None
            status = _status(spare.host_pid)
            assert status["Seccomp"] == "2" and status["NoNewPrivs"] == "1"
            assert status["CapEff"].strip("0") == "" and status["CapBnd"].strip("0") == ""
            assert status["PPid"] == str(first.host_pid)  # in the first member's unit, not a unit of its own
            assert status["NSpid"].split()[-1] == "2"


def test_a_spare_serves_one_episode_and_the_next_gets_a_new_unit(jail: SandboxPool) -> None:
    with jail.open_episode(PROBE, "Probe", None, spare=True) as first:
        with first.open_spare(PROBE, "Probe", None) as spare:
            in_unit = spare.host_pid
        with first.open_spare(PROBE, "Probe", None) as second:
            assert second.state["pid"] == 1  # a member of a unit of its own
            assert second.host_pid != in_unit


def test_an_episode_without_a_spare_opens_its_spare_episode_in_a_new_unit(jail: SandboxPool) -> None:
    with jail.open_episode(PROBE, "Probe", None) as first:
        with first.open_spare(PROBE, "Probe", None) as other:
            assert other.state["pid"] == 1 and other.state["patched"] is None


def _gone(host_pid: int, timeout_s: float = 5.0) -> bool:
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        try:
            if _status(host_pid).get("State", "").startswith(("Z", "X")):
                return True
        except OSError:
            return True
        time.sleep(0.02)
    return False


def test_an_unused_spare_dies_with_its_unit(jail: SandboxPool) -> None:
    first = jail.open_episode(PROBE, "Probe", None, spare=True)
    assert first.host_pid is not None
    [spare] = children_of(first.host_pid)  # waiting for code it will never get
    first.close()
    assert _gone(spare)


def test_pair_episodes_leave_no_process_behind(jail: SandboxPool) -> None:
    def play(times: int) -> int:
        for _ in range(times):
            with jail.open_episode(PROBE, "Probe", None, spare=True) as first:
                with first.open_spare(PROBE, "Probe", None) as spare:
                    assert spare.call("ping", {}).ok
        return steady_process_count(jail)

    settled = play(4)  # the pool now keeps pair units ready too
    assert play(6) == settled
