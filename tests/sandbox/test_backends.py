"""Backend choice: bwrap when it works, the weak rlimit backend only when explicitly allowed."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from envscaler_core.config import SandboxSettings
from sandbox import SandboxLimits, SandboxPool, SandboxUnavailable
from tests.sandbox.helpers import LIBRARY, LIBRARY_STATE, attack_code


def test_auto_picks_bwrap_with_seccomp_here(sandbox_pool: SandboxPool) -> None:
    info = sandbox_pool.info()
    assert info["backend"] == "bwrap"
    assert info["uid"] == 65534
    if not info["seccomp"]:
        pytest.skip(f"seccomp unavailable here: {info['protections'][-1]}")


def test_rlimit_backend_refuses_without_allow_weak() -> None:
    with pytest.raises(SandboxUnavailable, match="allow_weak"):
        SandboxPool(SandboxSettings(backend="rlimit"))


def test_rlimit_backend_runs_when_allowed_and_still_scrubs_the_environment(
        canary: str, caplog: pytest.LogCaptureFixture) -> None:
    with SandboxPool(SandboxSettings(backend="rlimit", allow_weak=True, workers=1)) as pool:
        assert "SANDBOX IS WEAK" in caplog.text
        assert pool.info()["backend"] == "rlimit"
        with pool.open_episode(LIBRARY, "Library", LIBRARY_STATE) as ep:
            assert ep.call("get_book", {"book_id": "b1"}).result["success"] is True
        with pool.open_episode(attack_code("return dict(os.environ)"), "Attack", None) as ep:
            out = ep.call("attack", {})
            assert out.ok and canary not in out.model_dump_json()


def test_an_interpreter_the_sandbox_uid_cannot_reach_is_refused(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("the uid drop (and so this check) only happens as root")
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    fake = private / "python3"
    fake.write_text("#!/bin/sh\nexit 0\n")
    fake.chmod(stat.S_IRWXU | stat.S_IRGRP | stat.S_IXGRP | stat.S_IROTH | stat.S_IXOTH)
    private.chmod(0o700)
    with pytest.raises(SandboxUnavailable, match="not searchable by other users"):
        SandboxPool(SandboxSettings(backend="bwrap", python=str(fake)))


def test_a_relative_interpreter_path_is_refused() -> None:
    with pytest.raises(SandboxUnavailable, match="not an absolute path"):
        SandboxPool(SandboxSettings(python="python3"))


def test_this_machine_gives_every_unit_namespaces_and_a_cgroup(sandbox_pool: SandboxPool) -> None:
    info = sandbox_pool.info()
    assert info["isolation"] == "namespaces"
    assert info["cgroup"] == 1, "cgroup v1 is writable by root here"
    assert any("own unit" in p for p in info["protections"])


def test_the_shared_isolation_mode_is_weak_and_says_so(caplog: pytest.LogCaptureFixture) -> None:
    with SandboxPool(SandboxSettings(workers=1), SandboxLimits(isolation="shared", cgroup="off")) as pool:
        assert "SANDBOX IS WEAK" in caplog.text and "MEMORY" not in caplog.text
        info = pool.info()
        assert info["isolation"] == "shared" and info["cgroup"] is None
        assert any(p.startswith("NO per-unit namespaces") for p in info["protections"])
        assert any(p.startswith("NO per-unit memory cap") for p in info["protections"])
        with pool.open_episode(LIBRARY, "Library", LIBRARY_STATE) as ep:
            assert ep.call("get_book", {"book_id": "b1"}).ok
        assert [o.passed for o in pool.run_checks(["def check_func(s):\n    return True\n"], {}, {})] == [True]


def test_a_unit_over_its_cgroup_memory_cap_is_killed_and_named(canary: str) -> None:
    """RLIMIT_AS allows 512 MiB, the unit's cgroup only 96 MiB: touching 200 MiB ends in the kernel's OOM kill."""
    limits = SandboxLimits(memory_mb=512, cgroup_memory_mb=96, cgroup="require")
    with SandboxPool(SandboxSettings(workers=1, call_timeout_s=10), limits) as pool:
        code = attack_code("blob = bytearray(200 << 20)\nfor i in range(0, len(blob), 4096):\n    blob[i] = 1\nreturn 1")
        with pool.open_episode(code, "Attack", {"n": 0}) as ep:
            out = ep.call("attack", {})
            assert (out.ok, out.error_kind) == (False, "crash"), out
            assert "memory cap (96 MiB)" in out.error
            assert ep.call("ping", {}).ok


def test_cgroups_left_by_a_killed_host_are_swept_by_the_next_pool(sandbox_pool: SandboxPool) -> None:
    if sandbox_pool.cgroups is None:
        pytest.skip("no per-unit cgroups on this host")
    dead = next(pid for pid in range(4_000_000, 3_000_000, -1) if not Path(f"/proc/{pid}").exists())
    stale = [parent.parent / f"envscaler-sandbox-{dead}-0badc0de" for parent in sandbox_pool.cgroups.parents.values()]
    for d in dict.fromkeys(stale):
        (d / "u0").mkdir(parents=True)
    with SandboxPool(SandboxSettings(workers=1)):
        assert not any(d.exists() for d in stale)
