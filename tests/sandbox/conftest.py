from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from envscaler_core.config import SandboxSettings
from sandbox import SandboxLimits, SandboxPool
from tests.sandbox.helpers import (
    Bystander,
    Listener,
    benign_call_works,
    steady_process_count,
    wait_for_process_count,
    zygote_fingerprint,
)


@pytest.fixture(scope="module")
def canary() -> Iterator[str]:
    """A fake API key in the test process's environment; it must never show up in any output."""
    value = f"sk-canary-{uuid.uuid4().hex}"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("OPENAI_API_KEY", value)
        mp.setenv("ENVSCALER_CANARY", value)
        yield value


@pytest.fixture(scope="module")
def jail(canary: str) -> Iterator[SandboxPool]:
    """A real pool with a short call timeout and a small memory cap so attack specs stay quick. Its checks run
    without the check audit hook: these specs test the layers beneath it (seccomp, namespaces, limits) with
    checks that fork, signal, open and import, which the hook would stop first (its own specs use `audited`)."""
    pool = SandboxPool(SandboxSettings(call_timeout_s=1.5, workers=2), SandboxLimits(memory_mb=256, check_audit=False))
    try:
        yield pool
    finally:
        pool.close()


@pytest.fixture(scope="module")
def audited() -> Iterator[SandboxPool]:
    """A real pool with the default limits: the check audit hook on (test_checks_make_classes_by_statements_only.py,
    test_check_audit_covers_the_whole_check.py)."""
    with SandboxPool(SandboxSettings(call_timeout_s=1.5, workers=1), SandboxLimits(memory_mb=256)) as pool:
        yield pool


@pytest.fixture(scope="module")
def solo(canary: str) -> Iterator[SandboxPool]:
    """A one-zygote pool: every unit in the same jail (neighbours in the strictest sense)."""
    pool = SandboxPool(SandboxSettings(call_timeout_s=1.5, workers=1), SandboxLimits(memory_mb=256))
    try:
        yield pool
    finally:
        pool.close()


@pytest.fixture(scope="module")
def baseline(jail: SandboxPool) -> int:
    """Processes in the jails with no episode open (bwrap's init, the zygote, its units made in advance and
    the pool's ready units: one of each kind per zygote), once the count is steady (a zygote makes its
    next unit right after handing one over)."""
    assert jail.warm_up()
    return steady_process_count(jail)


@pytest.fixture
def listener() -> Iterator[Listener]:
    lst = Listener()
    try:
        yield lst
    finally:
        lst.close()


@pytest.fixture
def marker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A host path the attack tries to create; tmp_path lives under /tmp, which the jail cannot see."""
    path = Path("/tmp") / f"envscaler-sandbox-marker-{uuid.uuid4().hex}"
    yield path
    if path.exists():
        path.unlink()


@pytest.fixture(autouse=True)
def _no_stray_markers() -> Iterator[None]:
    yield
    assert not any(p.name.startswith("pwned") for p in Path(os.getcwd()).iterdir())


@pytest.fixture
def guard(jail: SandboxPool, baseline: int) -> Iterator[Bystander]:
    """Host invariants around one attack; yields the bystander episode."""
    zygotes, roots = zygote_fingerprint(jail), jail.host_pids()
    restarts = [z.restarts for z in jail.zygotes]
    bystander = Bystander(jail)
    try:
        yield bystander
        assert bystander.unharmed(), "the bystander episode or its checks changed"
    finally:
        bystander.ep.close()
    assert zygote_fingerprint(jail) == zygotes, "a zygote's seccomp mode or rlimits changed"
    assert jail.host_pids() == roots and [z.restarts for z in jail.zygotes] == restarts, "a zygote was replaced"
    assert wait_for_process_count(jail, baseline) == baseline, "processes left behind in the jails"
    assert benign_call_works(jail)


@pytest.fixture
def fresh() -> Iterator[SandboxPool]:
    """A one-zygote pool of its own, for specs that break or replace its zygote."""
    pool = SandboxPool(SandboxSettings(call_timeout_s=2.0, workers=1), SandboxLimits(memory_mb=256))
    try:
        yield pool
    finally:
        pool.close()
