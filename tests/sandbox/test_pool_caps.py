"""Third red team: what many units together, or one unit through the disk, could do to the host, and a
host-wide counter one unit could move and another read.

* every unit had its own pids and memory caps, but the pool's parent cgroup had none: ~128 open (frozen)
  hostile episodes exhaust the host's pid space, ~42 its RAM. The parent now carries pool-wide caps; a hog
  then hurts only the pool, and a check that cannot fork there is never a passed check;
* one unit reading /usr with O_DIRECT from 16 threads took the host's 4 KiB reads from p50 0.06 ms to
  15.6 ms: disk reads are now throttled per unit (blkio);
* sysinfo(2)'s `procs` (every thread of the host) let an episode flip a check's verdict in another unit.

Each spec runs real sandbox processes and checks from the host."""

from __future__ import annotations

import ctypes
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import ValidationError

from envscaler_core.config import SandboxSettings
from sandbox import SandboxLimits, SandboxPool
from tests.sandbox.helpers import attack_code, benign_call_works

HOLDER = '''
import threading
class Holder:
    def __init__(self, cfg=None):
        pass

    def hold(self, n):
        threading.stack_size(65536)
        self._ev = threading.Event()
        made = 0
        try:
            for _ in range(n):
                threading.Thread(target=self._ev.wait, daemon=True).start()
                made += 1
        except RuntimeError:
            pass
        return {"threads_held": made}
'''
BIG = '''
class Big:
    def __init__(self, cfg=None):
        pass

    def grow(self, mb):
        self._blob = bytearray(mb << 20)  # private: not part of the state
        for i in range(0, len(self._blob), 4096):
            self._blob[i] = 1
        return {"held_mb": mb}
'''
TRUE_CHECK = "def check_func(final_state):\n    return True\n"


def host_pid_max() -> int:
    return int(Path("/proc/sys/kernel/pid_max").read_text())


def host_memory_mb() -> int:
    line = next(x for x in Path("/proc/meminfo").read_text().splitlines() if x.startswith("MemTotal:"))
    return int(line.split()[1]) >> 10


def parent(pool: SandboxPool, controller: str) -> Path:
    if pool.cgroups is None or controller not in pool.cgroups.parents:
        pytest.skip(f"no {controller} cgroup here")
    return pool.cgroups.parents[controller]


def read(path: Path) -> str:
    return path.read_text().strip()


@pytest.fixture
def small_pool() -> Iterator[SandboxPool]:
    """A pool whose pool-wide pids cap is reached by a couple of thread-holding episodes."""
    pool = SandboxPool(SandboxSettings(call_timeout_s=5.0, workers=1),
                       SandboxLimits(memory_mb=256, nproc=40, pool_pids_max=64))
    try:
        yield pool
    finally:
        pool.close()


def test_the_pool_parent_has_caps_derived_from_the_host(fresh: SandboxPool) -> None:
    pids = parent(fresh, "pids")
    assert read(pids / "pids.max") == str(min(host_pid_max() // 4, 32_768))
    memory = parent(fresh, "memory")
    name = "memory.limit_in_bytes" if fresh.cgroups.version == 1 else "memory.max"
    assert int(read(memory / name)) == (host_memory_mb() // 2) << 20
    described = " ".join(fresh.info()["protections"])
    assert f"pool-wide caps on the pool's parent cgroup: pids.max {min(host_pid_max() // 4, 32_768)}" in described


def test_neither_the_host_nor_the_zygotes_are_inside_the_capped_parent(fresh: SandboxPool) -> None:
    """Only units move below the pool's directory: a full pool must not stop the host or a zygote from
    making processes (the zygote clones every new unit)."""
    tag = parent(fresh, "pids").name
    with fresh.open_episode(HOLDER, "Holder", {}) as ep:
        ep.call("hold", {"n": 1})
        assert tag in Path(f"/proc/{ep.host_pid}/cgroup").read_text()
        for pid in [os.getpid(), *fresh.zygote_host_pids(), *fresh.host_pids()]:
            assert tag not in Path(f"/proc/{pid}/cgroup").read_text(), pid


def test_open_hostile_episodes_exhaust_the_pool_not_the_host(small_pool: SandboxPool) -> None:
    pids = parent(small_pool, "pids")
    eps = [small_pool.open_episode(HOLDER, "Holder", {}) for _ in range(3)]
    try:
        held = [ep.call("hold", {"n": 60}) for ep in eps]
        assert all(out.ok for out in held), held
        assert sum(out.result["threads_held"] for out in held) + len(eps) <= 64
        assert int(read(pids / "pids.current")) <= 64
        assert subprocess.run(["true"], timeout=30).returncode == 0  # the host still forks
    finally:
        for ep in eps:
            ep.close()
    assert benign_call_works(small_pool)


def test_a_check_that_cannot_fork_in_a_full_pool_is_not_passed(small_pool: SandboxPool) -> None:
    """Fail closed: with the pool's pids exhausted the batch supervisor cannot fork its check process;
    that check is a failed check (passed=None with the reason), never a passed one."""
    pids = parent(small_pool, "pids")
    hogs = [small_pool.open_episode(HOLDER, "Holder", {}) for _ in range(2)]
    try:
        assert all(hog.call("hold", {"n": 60}).ok for hog in hogs)
        assert int(read(pids / "pids.current")) >= 64
        first, second = small_pool.run_checks([TRUE_CHECK, TRUE_CHECK], {}, {})
        assert first.passed is None and second.passed is None, (first, second)
        assert "fork" in first.error, first
    finally:
        for hog in hogs:
            hog.close()
    deadline = time.monotonic() + 10
    while small_pool.run_checks([TRUE_CHECK], {}, {})[0].passed is not True:
        assert time.monotonic() < deadline, "checks did not recover once the hog was gone"
        time.sleep(0.2)


def test_units_together_cannot_take_more_memory_than_the_pool_cap() -> None:
    with SandboxPool(SandboxSettings(call_timeout_s=10.0, workers=1), SandboxLimits(pool_memory_mb=640)) as pool:
        memory = parent(pool, "memory")
        eps = [pool.open_episode(BIG, "Big", {}) for _ in range(2)]
        try:
            # the kernel's OOM killer takes a unit of this pool (here the frozen first one, the largest)
            grown = [ep.call("grow", {"mb": 400}) for ep in eps]
            usage = "memory.usage_in_bytes" if pool.cgroups.version == 1 else "memory.current"
            assert int(read(memory / usage)) <= 640 << 20
            after = [ep.call("grow", {"mb": 1}) for ep in eps]
            crashed = [out for out in grown + after if not out.ok]
            assert crashed, "two units held 800 MiB under a 640 MiB pool cap"
            assert crashed[0].error_kind == "crash" and "the pool's memory cap (640 MiB" in crashed[0].error, crashed[0]
        finally:
            for ep in eps:
                ep.close()
        assert benign_call_works(pool)


@pytest.mark.parametrize("kwargs, needle", [
    ({"pool_memory_mb": 200}, "below one unit's memory cap"),
    ({"pool_memory_mb": 1 << 30}, "exceeds the host's RAM"),
    ({"pool_pids_max": 100, "nproc": 256}, "below nproc"),
    ({"pool_pids_max": 1 << 30}, "pid_max"),
    ({"io_read_bps": 64 << 20, "pool_io_read_bps": 32 << 20}, "pool_io_read_bps"),
])
def test_pool_caps_that_protect_nothing_are_refused_with_a_clear_error(kwargs: dict, needle: str) -> None:
    with pytest.raises(ValidationError, match=needle):
        SandboxLimits(**kwargs)


BIG_FILES = ("/usr/lib/chromium/chromium", "/usr/lib/jvm/java-17-openjdk-amd64/lib/modules",
             "/usr/lib/x86_64-linux-gnu/libLLVM-15.so.1", "/usr/lib/x86_64-linux-gnu/libLLVM-14.so.1")


def big_file() -> str:
    for path in BIG_FILES:
        if os.path.exists(path) and os.path.getsize(path) >= 64 << 20:
            return path
    pytest.skip("no large file under /usr to read")


def test_one_unit_reading_the_disk_with_o_direct_is_throttled() -> None:
    """The red team's unit read 1.2 GB/s with O_DIRECT (no page cache to absorb it)."""
    path = big_file()
    limits = SandboxLimits(io_read_bps=4 << 20, io_read_iops=200)
    with SandboxPool(SandboxSettings(call_timeout_s=20.0, workers=1), limits) as pool:
        if pool.cgroups is None or pool.cgroups.io_controller is None:
            pytest.skip("no disk I/O controller here")
        with pool.open_episode(attack_code("""
            import mmap
            threading.stack_size(1 << 20)
            size, total, stop = os.path.getsize(PATH), [0], time.time() + 2.0
            def worker(k):
                fd = os.open(PATH, os.O_RDONLY | os.O_DIRECT)
                buf, off = mmap.mmap(-1, 1 << 20), (k * 37 << 20) % (size - (1 << 20))
                while time.time() < stop:
                    total[0] += os.preadv(fd, [buf], off & ~4095)
                    off = (off + (7 << 20)) % (size - (1 << 20))
                os.close(fd)
            ts = [threading.Thread(target=worker, args=(k,)) for k in range(8)]
            [t.start() for t in ts]
            [t.join() for t in ts]
            return total[0] >> 20
        """).replace("PATH", repr(path)), "Attack", {}) as ep:
            out = ep.call("attack", {})
    assert out.ok, out
    assert out.result <= 3 * 4 * 2, f"read {out.result} MiB in 2 s under a 4 MiB/s cap"


def test_a_cold_stdlib_import_in_a_unit_is_still_quick() -> None:
    """Units read almost nothing (the zygote imported what they use), but an env may import a stdlib module
    the zygote did not; with its files evicted from the page cache it must still load well within a call."""
    package = Path("/usr/lib/python3.11/email")
    if not package.is_dir():
        pytest.skip("no /usr/lib/python3.11 here")
    for path in package.rglob("*"):
        if path.is_file():
            fd = os.open(path, os.O_RDONLY)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)  # evict just these files' clean pages
            os.close(fd)
    with SandboxPool(SandboxSettings(call_timeout_s=10.0, workers=1)) as pool:
        with pool.open_episode(attack_code("""
            t = time.monotonic()
            import email.mime.multipart, email.parser, email.policy
            return round(time.monotonic() - t, 3)
        """), "Attack", {}) as ep:
            out = ep.call("attack", {})
    assert out.ok, out
    assert out.result < 2.0, f"a cold import took {out.result} s"


SYSINFO = '''
import ctypes
class SI(ctypes.Structure):
    _fields_ = [("uptime", ctypes.c_long), ("loads", ctypes.c_ulong * 3), ("totalram", ctypes.c_ulong),
                ("freeram", ctypes.c_ulong), ("sharedram", ctypes.c_ulong), ("bufferram", ctypes.c_ulong),
                ("totalswap", ctypes.c_ulong), ("freeswap", ctypes.c_ulong), ("procs", ctypes.c_ushort),
                ("pad", ctypes.c_ushort), ("totalhigh", ctypes.c_ulong), ("freehigh", ctypes.c_ulong),
                ("mem_unit", ctypes.c_uint), ("_f", ctypes.c_char * 8)]
def check_func(final_state):
    si = SI()
    if ctypes.CDLL(None).sysinfo(ctypes.byref(si)) != 0:
        return False
    return si.procs > final_state["baseline"] + 200
'''


def host_tasks() -> int:
    return int(Path("/proc/loadavg").read_text().split()[3].split("/")[1])


def test_an_episode_cannot_flip_another_units_check_through_sysinfo(jail: SandboxPool) -> None:
    """The red team's episode started 250 threads (host-wide count, sysinfo `procs`), stayed frozen, and a
    check in another unit with the same states went from False to True."""
    state = {"baseline": host_tasks()}
    alone = jail.run_checks([SYSINFO], {}, state)[0]
    with jail.open_episode(HOLDER, "Holder", {}) as ep:
        assert ep.call("hold", {"n": 250}).ok
        beside = jail.run_checks([SYSINFO], {}, state)[0]
    assert (alone.passed, beside.passed) == (False, False), (alone, beside)


def test_sysinfo_is_refused_and_sysconf_says_so(jail: SandboxPool) -> None:
    with jail.open_episode(attack_code("""
        buf = ctypes.create_string_buffer(256)
        res = {'sysinfo': errno_of(libc.sysinfo(buf))}
        for name in ('SC_PHYS_PAGES', 'SC_AVPHYS_PAGES'):
            try:
                res[name] = os.sysconf(name)
            except OSError as exc:
                res[name] = type(exc).__name__
        res['cpus'] = os.cpu_count()
        return res
    """), "Attack", {}) as ep:
        out = ep.call("attack", {})
    assert out.ok, out
    assert out.result["sysinfo"] == "EPERM"
    assert out.result["SC_PHYS_PAGES"] == out.result["SC_AVPHYS_PAGES"] == "PermissionError"
    assert out.result["cpus"] == os.cpu_count()


def test_the_host_itself_keeps_sysinfo() -> None:
    """The filter is the jail's: the orchestrator's own sysinfo (psutil, sysconf) is untouched."""
    buf = ctypes.create_string_buffer(256)
    assert ctypes.CDLL(None).sysinfo(buf) == 0 and os.sysconf("SC_PHYS_PAGES") > 0
