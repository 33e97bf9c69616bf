"""Spec: loads that replay work get the time of the work they replay, not one call's limit.

A BFCL checker runs every played and every ground-truth call while it loads, and an episode rebuilt
after a crash re-runs every call so far. Each call is held to `sandbox.call_timeout_s`; the load that
replays n of them may take n times that. A red team made honest, individually quick calls add up past
one limit: the checker's verdict became an "envscaler:checker_failed" invalid task, and after one
timeout every later call of the task failed with "could not rebuild the episode".
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from envscaler_core.bfcl.data import find_task
from envscaler_core.bfcl.executor import SandboxedTask
from envscaler_core.bfcl.package import jail_imports
from envscaler_core.bfcl.reference import InProcessTask, score_in_process
from envscaler_core.config import SandboxSettings
from sandbox import JailImports, SandboxPool

pytestmark = pytest.mark.slow

TASK = "multi_turn_base_15"  # GorillaFileSystem and MathAPI
SLOW = "square_root(number=2,precision=30000)"  # ~0.3 s of CPU here, well inside the 1 s limit alone
TOO_SLOW = "square_root(number=2,precision=2000000)"  # far over it


@pytest.fixture(scope="module")
def one_second_pool() -> Iterator[SandboxPool]:
    pool = SandboxPool(SandboxSettings(workers=1, call_timeout_s=1.0), imports=JailImports(**jail_imports()))
    try:
        yield pool
    finally:
        pool.close()


def test_a_checker_replaying_more_than_one_calls_limit_still_gives_the_packages_verdict(
        one_second_pool: SandboxPool) -> None:
    task = find_task(TASK)
    decoded = [[list(turn)] for turn in task.ground_truth]
    decoded[0] = [[SLOW] * 5 + list(task.ground_truth[0])]
    with SandboxedTask(one_second_pool, task) as sandboxed:
        for turn in decoded:
            sandboxed.execute_step(turn[0])
        verdict = sandboxed.score(decoded)
    expected = score_in_process(task, decoded)
    assert (verdict.valid, verdict.error_type) == (expected.valid, expected.error_type)


def test_after_a_timeout_the_rebuilt_episode_answers_later_calls_as_the_package_does(
        one_second_pool: SandboxPool) -> None:
    task = find_task(TASK)
    honest = ["touch(file_name='a.txt')", "pwd()", "mean(numbers=[3,16,60])"]
    reference = InProcessTask(task)
    with SandboxedTask(one_second_pool, task) as sandboxed:
        for call in [SLOW] * 6:
            assert sandboxed.execute(call) == reference.execute(call)
        assert "timeout" in sandboxed.execute(TOO_SLOW)
        observed = [sandboxed.execute(call) for call in honest]
    assert observed == [reference.execute(call) for call in honest]
