"""The host side of the sandbox at the scale of a large batch: hundreds of units made and killed, cgroup
directories reused, more than a thousand descriptors open. Found by the 100x scale run, where a cgroup
that was half removed and then reused failed its next unit, its zygote was replaced, and every episode of
that jail crashed (healthy classes rejected, validations failed)."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from pathlib import Path

import pytest

from envscaler_core.config import SandboxSettings
from sandbox import SandboxPool
from sandbox.cgroups import MAX_FREE
from sandbox.workdirs import OWNER_SUFFIX
from tests.sandbox.helpers import LIBRARY, LIBRARY_STATE, benign_call_works


def hierarchies(pool: SandboxPool) -> int:
    if pool.cgroups is None:
        pytest.skip("no per-unit cgroups here")
    return len(set(pool.cgroups.parents.values()))


def test_a_cgroup_whose_removal_half_succeeded_is_never_handed_to_a_unit(fresh: SandboxPool) -> None:
    if hierarchies(fresh) < 2:
        pytest.skip("one cgroup hierarchy: a removal cannot half succeed")
    cgroups = fresh.cgroups
    assert cgroups is not None
    unit = cgroups.create_unit()
    cgroups.release(unit)
    unit.dirs[-1].rmdir()  # what rmdir does when one hierarchy lets go and another still holds an exiting process
    again = cgroups.create_unit()
    assert again is not unit and all(d.is_dir() for d in again.dirs)
    cgroups.release(again)
    assert benign_call_works(fresh)


def test_released_cgroups_past_the_reuse_limit_are_removed(fresh: SandboxPool) -> None:
    hierarchies(fresh)
    cgroups = fresh.cgroups
    assert cgroups is not None
    parent = next(iter(cgroups.parents.values()))
    units = [cgroups.create_unit() for _ in range(MAX_FREE + 8)]
    for unit in units:
        cgroups.release(unit)
    assert all(not d.exists() for unit in units[:8] for d in unit.dirs)
    assert len(list(parent.glob("u*"))) <= MAX_FREE + 2 * 2  # plus the pool's own ready units (one per kind)


def test_a_cgroup_the_host_cannot_set_up_costs_one_unit_not_the_jail(fresh: SandboxPool,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    hierarchies(fresh)
    zygote = fresh.zygotes[0]
    pid_before = zygote.host_pid
    with fresh.open_episode(LIBRARY, "Library", LIBRARY_STATE) as running:
        assert running.call("get_book", {"book_id": "b1"}).ok

        def no_room() -> None:
            raise OSError(errno.ENOSPC, "No space left on device")

        monkeypatch.setattr(fresh.cgroups, "create_unit", no_room)  # the kernel refusing a new cgroup
        for _ in range(3):
            try:
                fresh.open_episode(LIBRARY, "Library", LIBRARY_STATE).close()
            except Exception as exc:  # noqa: BLE001 - the ready unit may serve one; the others must say why
                assert "cannot put the unit in its cgroup" in str(exc)
        assert zygote.host_pid == pid_before and zygote.restarts == 0
        assert running.call("get_book", {"book_id": "b1"}).ok, "the jail's running episode was killed"
        monkeypatch.undo()
    assert benign_call_works(fresh)


def test_episodes_run_while_the_host_holds_more_than_1024_descriptors(fresh: SandboxPool) -> None:
    """select() refuses descriptors numbered 1024 and above; a factory with a hundred episodes in flight,
    its store, its HTTP connections and its Prefect client passes that easily."""
    null = os.open(os.devnull, os.O_RDONLY)
    held = [os.dup(null) for _ in range(1100)]
    try:
        assert max(held) >= 1024
        with fresh.open_episode(LIBRARY, "Library", LIBRARY_STATE) as ep:
            assert ep.call("get_book", {"book_id": "b1"}).result["data"]["title"] == "Dune"
    finally:
        for fd in (*held, null):
            os.close(fd)


def test_the_cgroup_parent_of_a_closed_pool_is_gone(fresh: SandboxPool) -> None:
    hierarchies(fresh)
    assert fresh.cgroups is not None
    parents = set(fresh.cgroups.parents.values())
    assert benign_call_works(fresh)
    fresh.close()
    assert not any(Path(p).exists() for p in parents)


def _pool_in_a_process_killed_with_sigkill() -> str:
    """The workdir of a pool whose process died without a chance to clean up."""
    script = ("import time\nfrom envscaler_core.config import SandboxSettings\nfrom sandbox import SandboxPool\n"
              "pool = SandboxPool(SandboxSettings(workers=1))\nprint(pool._workdir, flush=True)\ntime.sleep(120)\n")
    root = Path(__file__).resolve().parents[2]
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, cwd=root,
                            env={**os.environ, "PYTHONPATH": str(root)})
    try:
        workdir = proc.stdout.readline().decode().strip()
    finally:
        proc.kill()
        proc.wait()
    return workdir


def test_the_directory_a_killed_pool_left_is_removed_by_the_next_pool() -> None:
    workdir = _pool_in_a_process_killed_with_sigkill()
    assert Path(workdir).is_dir(), "SIGKILL: nothing in the killed process could remove it"
    with SandboxPool(SandboxSettings(workers=1)) as pool:
        assert not Path(workdir).exists() and not Path(workdir + OWNER_SUFFIX).exists()
        assert benign_call_works(pool)


def test_the_next_pool_leaves_a_live_pool_s_directory_alone(fresh: SandboxPool) -> None:
    with SandboxPool(SandboxSettings(workers=1)):
        assert Path(fresh._workdir).is_dir()
    assert benign_call_works(fresh)


def test_a_directory_owned_in_another_pid_namespace_is_left_alone(tmp_path: Path) -> None:
    from sandbox.workdirs import PREFIX, sweep_stale

    workdir = tmp_path / f"{PREFIX}elsewhere"
    workdir.mkdir()
    Path(str(workdir) + OWNER_SUFFIX).write_text("1 1 pid:[1]\n")  # pid 1 of a namespace that is not ours
    assert sweep_stale(str(tmp_path)) == []
    assert workdir.is_dir()
