"""Ready units (sandbox/warm.py): made and verified ahead of use, never handed out stale."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path


from sandbox import SandboxPool
from tests.sandbox.helpers import CHECKS, EXPECTED_CHECKS, LIBRARY, LIBRARY_STATE


def alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_ready_units_of_a_replaced_zygote_are_never_handed_out(fresh: SandboxPool) -> None:
    assert fresh.warm_up()
    stale = set(fresh.keeper.ready_pids())
    assert len(stale) == 2  # one episode unit, one check-batch unit
    zygote = fresh.zygotes[0]
    zygote.replace(zygote.generation, "replaced by a spec")
    with fresh.open_episode(LIBRARY, "Library", LIBRARY_STATE) as ep:
        assert ep.call("get_book", {"book_id": "b1"}).ok
        assert ep.host_pid not in stale
    assert [o.passed for o in fresh.run_checks(CHECKS, LIBRARY_STATE, LIBRARY_STATE)] == EXPECTED_CHECKS


def test_a_ready_unit_that_died_while_waiting_is_replaced_on_the_callers_path(fresh: SandboxPool) -> None:
    assert fresh.warm_up()
    pids = fresh.keeper.ready_pids()
    for pid in pids:
        os.kill(pid, signal.SIGKILL)
    while any(alive(pid) for pid in pids):
        time.sleep(0.01)
    with fresh.open_episode(LIBRARY, "Library", LIBRARY_STATE) as ep:
        assert ep.call("get_book", {"book_id": "b1"}).ok
    assert [o.passed for o in fresh.run_checks(CHECKS, LIBRARY_STATE, LIBRARY_STATE)] == EXPECTED_CHECKS
    assert fresh.zygotes[0].restarts == 0
