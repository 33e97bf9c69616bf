"""Spec: a call's time limit counts the time the machine gave it, so neighbours that hog the CPU cannot
turn an honest call into a timeout (a red team did, with 14 spinning episodes on 2 cores). The deadline
moves on by the time the unit waited, runnable, for a CPU, up to `HARD_FACTOR` times the limit; a call
that sleeps gets no extension. Contention is made certain by pinning every unit to one CPU."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator

import pytest

from envscaler_core.config import SandboxSettings
from sandbox import SandboxPool
from sandbox.call_clock import HARD_FACTOR, run_delay_s

LIMIT_S = 1.0
WORK = '''
import time

class Work:
    def __init__(self, init_config: dict = None):
        self.done = 0

    def burn(self, seconds: float) -> dict:
        end = time.process_time() + seconds
        while time.process_time() < end:
            pass
        self.done += 1
        return {"done": self.done}

    def nap(self, seconds: float) -> dict:
        time.sleep(seconds)
        return {"done": self.done}
'''


@pytest.fixture(scope="module")
def pool() -> Iterator[SandboxPool]:
    with SandboxPool(SandboxSettings(call_timeout_s=LIMIT_S, workers=1)) as p:
        yield p


def _pinned_episode(pool: SandboxPool, cpu: int):
    episode = pool.open_episode(WORK, "Work", {})
    assert episode.host_pid is not None
    os.sched_setaffinity(episode.host_pid, {cpu})
    return episode


def test_the_kernel_reports_how_long_a_process_waited_for_a_cpu() -> None:
    assert run_delay_s(os.getpid()) is not None


def test_a_call_starved_by_hogging_neighbours_is_not_a_timeout(pool: SandboxPool) -> None:
    cpu = min(os.sched_getaffinity(0))
    honest = _pinned_episode(pool, cpu)
    hogs = [_pinned_episode(pool, cpu) for _ in range(5)]
    outcomes: list = []
    threads = [threading.Thread(target=lambda e=e: outcomes.append(e.call("burn", {"seconds": 30.0}))) for e in hogs]
    try:
        for t in threads:
            t.start()
        time.sleep(0.3)
        honest_outcome = honest.call("burn", {"seconds": 0.25})  # ~1.5 s of wall time at a sixth of a CPU
        for t in threads:
            t.join()
    finally:
        for e in (honest, *hogs):
            e.close()
    assert honest_outcome.ok, honest_outcome.error
    assert honest_outcome.elapsed_ms > LIMIT_S * 1000, "it was not starved past its limit: the spec proves nothing"
    assert all(not o.ok and o.error_kind == "timeout" for o in outcomes)
    assert all("waited for a busy CPU" in o.error for o in outcomes)
    assert all(o.elapsed_ms <= (LIMIT_S * HARD_FACTOR + 1.0) * 1000 for o in outcomes)  # the hard cap holds


def test_a_call_that_sleeps_past_its_limit_gets_no_extension(pool: SandboxPool) -> None:
    with pool.open_episode(WORK, "Work", {}) as episode:
        outcome = episode.call("nap", {"seconds": 10.0})
    assert not outcome.ok and outcome.error_kind == "timeout"
    assert "busy CPU" not in outcome.error
    assert outcome.elapsed_ms < LIMIT_S * HARD_FACTOR * 1000 / 2
