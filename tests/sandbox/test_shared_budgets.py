"""Second red team (issue 10 follow-up): what one unit could do to kernel budgets and objects that the
kernel keeps per host or per uid, i.e. shared with every other unit, jail and host process even across
namespaces: the Linux AIO budget, pipe buffers and descriptors past RLIMIT_NOFILE, queued signals and
POSIX timers, record locks and shared futexes (channels between units), the host's page cache; and a
forged reply whose result is over the result cap.

Each spec runs the attack through the public API and checks the host invariant from outside (the host's
own io_setup, the pipe size a new unit gets, /proc/locks, the unit's SigQ, the host's page cache); the
`guard` fixture adds a bystander episode's results and checks, the zygotes' seccomp and limits, no
process left behind and a benign call."""

from __future__ import annotations

import ctypes
import fcntl
import os
from pathlib import Path

import pytest

from sandbox import SandboxPool
from tests.sandbox.helpers import attack_code, benign_call_works

F_GETPIPE_SZ = 1032
ZONE = "/usr/share/zoneinfo/Asia/Kathmandu"
libc = ctypes.CDLL(None, use_errno=True)


def host_io_setup_works() -> bool:
    """Can a host process (this one, root) still get a Linux AIO context?"""
    ctx = ctypes.c_ulong(0)
    if libc.syscall(206, 1, ctypes.byref(ctx)) != 0:  # io_setup
        return False
    libc.syscall(207, ctx)  # io_destroy
    return True


def aio_nr() -> int:
    return int(Path("/proc/sys/fs/aio-nr").read_text())


def attacker(pool: SandboxPool, body: str):
    """An open episode whose `attack` ran once; the caller checks the host while it stays open."""
    ep = pool.open_episode(attack_code(body), "Attack", {"n": 0})
    return ep, ep.call("attack", {})


def test_linux_aio_is_refused_and_the_host_keeps_its_aio_budget(jail: SandboxPool, guard) -> None:
    before = aio_nr()
    ep, out = attacker(jail, """
        ctx = ctypes.c_ulong(0)
        res = {n: errno_of(libc.syscall(206, n, ctypes.byref(ctx))) for n in (65536, 4096, 1)}
        for name, nr in (('io_submit', 209), ('io_getevents', 208), ('io_pgetevents', 333), ('io_cancel', 210),
                         ('io_destroy', 207)):
            res[name] = errno_of(libc.syscall(nr, 0, 0, 0, 0, 0, 0))
        return sorted(set(map(str, res.values())))
    """)
    try:
        assert out.ok and out.result == ["EPERM"], out
        assert host_io_setup_works(), "the host lost its Linux AIO budget while the episode is open"
        assert aio_nr() < before + 4096, "the episode holds AIO contexts"
        assert ep.call("ping", {}).ok
    finally:
        ep.close()


def test_no_unit_holds_pipes_or_descriptors_past_its_nofile_limit(jail: SandboxPool, guard) -> None:
    """The red team pinned 1,100 pipes with 6 open fds (pending AIO polls keep files alive) and pushed the
    uid's pipe-buffer account over its soft limit: every new pipe of every unit got 8 KiB. Pipe buffers
    are charged per uid, so a unit may not make pipes at all (it gets its two from the zygote), and a
    thread must share its process's descriptor table (one of its own would get RLIMIT_NOFILE again)."""
    ep, out = attacker(jail, """
        import errno, select
        res = {}
        made = []
        try:
            while len(made) < 2000:
                made.append(os.pipe())
        except OSError as exc:
            res['pipe'] = errno.errorcode[exc.errno]
        res['pipes made'] = len(made)
        res['pipe2'] = errno_of(libc.syscall(293, ctypes.byref((ctypes.c_int * 2)()), 0))
        # CLONE_VM|CLONE_SIGHAND|CLONE_THREAD without CLONE_FILES: a thread with its own descriptor table
        res['thread without CLONE_FILES'] = errno_of(libc.syscall(56, 0x100 | 0x800 | 0x10000, 0, 0, 0, 0))
        ep = select.epoll()
        watched = 0
        for fd in range(64):
            try:
                ep.register(fd, select.EPOLLIN)
                watched += 1
            except OSError:
                pass
        res['fds'] = len(os.listdir('/proc/self/fd'))
        seen = []
        t = threading.Thread(target=lambda: seen.append(len(os.listdir('/proc/self/fd'))))
        t.start()
        t.join()
        res['threads share the table'] = seen == [res['fds']]
        return res
    """)
    try:
        assert out.ok, out
        assert out.result["pipes made"] == 0 and out.result["pipe"] == "EPERM", out.result
        assert out.result["pipe2"] == out.result["thread without CLONE_FILES"] == "EPERM", out.result
        assert out.result["threads share the table"], out.result
        assert len(os.listdir(f"/proc/{ep.host_pid}/fd")) <= jail.limits.nofile
        with jail.open_episode(attack_code("return 1"), "Attack", {"n": 0}) as fresh:
            assert fresh.call("ping", {}).ok
            # a new unit's pipes (made by the zygote, charged to the uid) still get their full 64 KiB
            assert fcntl.fcntl(fresh._child.req_fd, F_GETPIPE_SZ) == 1 << 16
            assert fcntl.fcntl(fresh._child.rep_fd, F_GETPIPE_SZ) == 1 << 16
    finally:
        ep.close()


@pytest.mark.parametrize("frame, needle", [
    ("b'{\"ok\":true,\"result\":\"' + b'A' * 3_000_000 + b'\",\"output\":\"\"}'", "over the result cap"),
    ("b'{\"ok\":true,\"result\":[' + b'{},' * 1_300_000 + b'{}],\"output\":\"\",\"state\":{\"n\":1}}'",
     "values, over the cap of"),
    ("b'{\"ok\":true,\"result\":1,\"output\":\"\",\"state\":{\"n\":\"' + b'x' * (2 << 20) + b'\"}}'",
     "over the state cap"),
])
def test_a_forged_reply_over_a_cap_is_refused_host_side(jail: SandboxPool, frame: str, needle: str) -> None:
    """The worker refuses an over-cap result itself; a unit writing its own reply frame (fd 7) must meet the
    same caps on the host: `oversize`, the unit killed, the episode going on from its last state."""
    with jail.open_episode(attack_code(f"forge({frame})"), "Attack", {"n": 0}) as ep:
        assert ep.call("ping", {}).state == {"n": 1}
        out = ep.call("attack", {})
        assert (out.ok, out.error_kind, out.result) == (False, "oversize", None), out.model_dump(exclude={"state"})
        assert needle in out.error and out.state == {"n": 1}, out.error
        after = ep.call("ping", {})
        assert after.ok and after.state == {"n": 2} and ep.restarts == 1


def test_record_locks_are_refused_so_no_episode_or_check_sees_another_ones(jail: SandboxPool, guard) -> None:
    """Locks on an inode every unit can open (/dev/null read-write, /usr files read-only) carried a secret
    from one episode to another and to a check."""
    ep, out = attacker(jail, """
        import fcntl, struct
        res = {}
        for path, mode in (('/dev/null', os.O_RDWR), (os.__file__, os.O_RDONLY)):
            fd = os.open(path, mode)
            lock = struct.pack('hhqqi4x', fcntl.F_RDLCK, 0, 1000, 1, 0)
            for name, cmd in (('F_GETLK', 5), ('F_SETLK', 6), ('F_SETLKW', 7), ('F_OFD_GETLK', 36),
                              ('F_OFD_SETLK', 37), ('F_OFD_SETLKW', 38)):
                try:
                    fcntl.fcntl(fd, cmd, lock)
                    res[f'{path} {name}'] = 'allowed'
                except OSError as exc:
                    res[f'{path} {name}'] = exc.errno
            try:
                fcntl.lockf(fd, fcntl.LOCK_SH | fcntl.LOCK_NB, 1, 1000)
                res[f'{path} lockf'] = 'allowed'
            except OSError as exc:
                res[f'{path} lockf'] = exc.errno
        return sorted(set(res.values()), key=str)
    """)
    try:
        assert out.ok and out.result == [1], out  # EPERM everywhere
        assert str(ep.host_pid) not in Path("/proc/locks").read_text().split(), "the unit holds a lock"
        probe = ("import fcntl, os, struct\n"
                 "def check_func(final_state):\n"
                 "    fd = os.open('/dev/null', os.O_RDWR)\n"
                 "    try:\n"
                 "        got = fcntl.fcntl(fd, fcntl.F_GETLK, struct.pack('hhqqi4x', fcntl.F_WRLCK, 0, 1000, 1, 0))\n"
                 "    except PermissionError:\n"
                 "        return False\n"
                 "    return struct.unpack('hhqqi4x', got)[0] != fcntl.F_UNLCK\n")
        assert [o.passed for o in jail.run_checks([probe], {}, {})] == [False]
        assert ep.call("ping", {}).ok
    finally:
        ep.close()


FUTEX_ON_A_USR_PAGE = """
        import mmap, struct
        libc.mmap.restype = ctypes.c_void_p
        libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
        fd = os.open(os.__file__, os.O_RDONLY)
        res = {}
        for kind, flags in (('MAP_SHARED', mmap.MAP_SHARED), ('MAP_PRIVATE', mmap.MAP_PRIVATE)):
            addr = ctypes.c_void_p(libc.mmap(None, 4096, mmap.PROT_READ, flags, fd, 0) + 64)
            value = ctypes.c_uint32.from_address(addr.value).value
            timeout = struct.pack('qq', 0, 300_000_000)  # a wait that really waited would end in ETIMEDOUT
            res[f'{kind} wait'] = errno_of(libc.syscall(202, addr, 0, value, timeout, 0, 0))
            res[f'{kind} wait_bitset'] = errno_of(libc.syscall(202, addr, 9, value, 0, 0, -1))
            res[f'{kind} wake'] = errno_of(libc.syscall(202, addr, 1, 1, 0, 0, 0))
            res[f'{kind} wake_bitset'] = errno_of(libc.syscall(202, addr, 10, 1, 0, 0, -1))
            res[f'{kind} cmp_requeue'] = errno_of(libc.syscall(202, addr, 4, 1, 1, addr, value))
            res[f'{kind} futex_wake (futex2)'] = errno_of(libc.syscall(454, addr, -1, 1, 2))
            res[f'{kind} futex_waitv'] = errno_of(libc.syscall(449, 0, 0, 0, 0, 1))
        private = ctypes.c_uint32(0)
        res['FUTEX_PRIVATE_FLAG wait'] = errno_of(libc.syscall(202, ctypes.byref(private), 128, 0,
                                                    struct.pack('qq', 0, 10_000_000), 0, 0))
        res['FUTEX_PRIVATE_FLAG wake'] = errno_of(libc.syscall(202, ctypes.byref(private), 129, 1, 0, 0, 0))
        return res
"""


def test_shared_futexes_on_host_files_carry_nothing_between_units(jail: SandboxPool, guard) -> None:
    """A shared futex on a file-backed page is keyed by inode and offset, the same key in every unit: a
    FUTEX_WAKE in one episode woke a FUTEX_WAIT in another. That holds for MAP_PRIVATE mappings too (an
    unwritten page is still the page-cache page: libc's own code), so refusing MAP_SHARED would not do;
    shared waits answer EAGAIN at once and every other shared operation is refused."""
    ep, out = attacker(jail, FUTEX_ON_A_USR_PAGE)
    try:
        assert out.ok, out
        res = out.result
        for kind in ("MAP_SHARED", "MAP_PRIVATE"):
            assert res[f"{kind} wait"] == res[f"{kind} wait_bitset"] == "EAGAIN", res
            assert {res[f"{kind} wake"], res[f"{kind} wake_bitset"], res[f"{kind} cmp_requeue"],
                    res[f"{kind} futex_wake (futex2)"], res[f"{kind} futex_waitv"]} == {"EPERM"}, res
        assert res["FUTEX_PRIVATE_FLAG wait"] == "ETIMEDOUT" and res["FUTEX_PRIVATE_FLAG wake"] == 0, res
        assert ep.call("ping", {}).ok
    finally:
        ep.close()


def test_posix_timers_and_queued_signals_are_bounded_per_unit(jail: SandboxPool, guard) -> None:
    """Each POSIX timer and each queued signal counts against the uid's pending-signal budget on the whole
    host; one unit made 50,000 timers in 1.3 s. A unit now has RLIMIT_SIGPENDING of its own (64)."""
    ep, out = attacker(jail, """
        import errno
        timers, failed = 0, None
        while timers < 5000:
            tid = ctypes.c_int(0)
            if libc.syscall(222, 1, 0, ctypes.byref(tid)) != 0:   # timer_create(CLOCK_MONOTONIC, NULL, &id)
                failed = errno.errorcode[ctypes.get_errno()]
                break
            timers += 1
        signal.signal(signal.SIGRTMIN, lambda *a: None)
        signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGRTMIN])
        queued = 0
        try:
            while queued < 5000:
                signal.pthread_kill(threading.get_ident(), signal.SIGRTMIN)  # tgkill to ourselves
                queued += 1
        except OSError:
            pass
        return {'timers': timers, 'failed': failed, 'queued after timers': queued}
    """)
    try:
        assert out.ok, out
        cap = jail.limits.sigpending
        assert out.result["timers"] <= cap and out.result["failed"] == "EAGAIN", out.result
        assert out.result["queued after timers"] <= cap - out.result["timers"], out.result
        status = Path(f"/proc/{ep.host_pid}/status").read_text()
        sigq = next(line.split()[1] for line in status.splitlines() if line.startswith("SigQ:"))
        used, limit = map(int, sigq.split("/"))
        assert limit == cap and used <= cap + 2, sigq  # + the host's own SIGSTOP/SIGCONT (never refused)
        with jail.open_episode(attack_code("""
            tid = ctypes.c_int(0)
            return errno_of(libc.syscall(222, 1, 0, ctypes.byref(tid)))
        """), "Attack", {"n": 0}) as other:
            assert other.call("attack", {}).result == 0, "another episode could not make a timer"
    finally:
        ep.close()


def test_host_page_cache_can_be_neither_evicted_nor_probed(jail: SandboxPool, guard) -> None:
    """posix_fadvise(DONTNEED) evicted host page cache of /usr files and preadv2(RWF_NOWAIT) then showed
    whether another episode read a file since (which time zone it used)."""
    with open(ZONE, "rb") as fh:
        fh.read()  # cached on the host
    ep, out = attacker(jail, f"""
        import mmap
        res = {{}}
        fd = os.open({ZONE!r}, os.O_RDONLY)
        for advice in ('POSIX_FADV_DONTNEED', 'POSIX_FADV_NOREUSE', 'POSIX_FADV_WILLNEED'):
            try:
                os.posix_fadvise(fd, 0, 0, getattr(os, advice))
                res[advice] = 'allowed'
            except OSError as exc:
                res[advice] = exc.errno
        try:
            os.preadv(fd, [bytearray(64)], 0, os.RWF_NOWAIT)
            res['RWF_NOWAIT'] = 'allowed'
        except OSError as exc:
            res['RWF_NOWAIT'] = exc.errno
        res['readahead'] = errno_of(libc.syscall(187, fd, 0, 4096))
        libc.mmap.restype = ctypes.c_void_p
        libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
        mapped = ctypes.c_void_p(libc.mmap(None, 4096, mmap.PROT_READ, mmap.MAP_PRIVATE, fd, 0))
        for advice, number in (('MADV_COLD', 20), ('MADV_PAGEOUT', 21)):
            res[advice] = errno_of(libc.syscall(28, mapped, 4096, number))
        vec = ctypes.create_string_buffer(16)
        addr = ctypes.addressof(ctypes.c_char.from_buffer(bytearray(4096)))
        res['mincore'] = errno_of(libc.syscall(27, addr & ~4095, 4096, vec))
        res['cachestat'] = errno_of(libc.syscall(451, fd, 0, 0, 0))
        for name, args in (('sync', (162,)), ('syncfs', (306, fd)), ('fsync', (74, fd)), ('fdatasync', (75, fd)),
                           ('sync_file_range', (277, fd, 0, 0, 2))):
            res[name] = errno_of(libc.syscall(*args))
        plain = os.preadv(fd, [bytearray(4)], 0)  # an ordinary read still works
        return {{'refused': sorted(set(map(str, res.values()))), 'plain read': plain}}
    """)
    try:
        assert out.ok, out
        assert out.result == {"refused": ["1", "EPERM"], "plain read": 4}, out.result
        fd = os.open(ZONE, os.O_RDONLY)
        try:
            assert os.preadv(fd, [bytearray(64)], 0, os.RWF_NOWAIT) == 64, "the host's cached page was evicted"
        finally:
            os.close(fd)
        assert ep.call("ping", {}).ok
    finally:
        ep.close()


def test_direct_io_is_refused_so_no_read_outlives_its_unit(jail: SandboxPool, guard) -> None:
    """A direct-I/O read waits uninterruptibly in the unit's throttled disk queue: 50 threads queueing
    16 MiB each outlived their unit's SIGKILL by minutes, stalled the zygote that reaped it and took the
    jail down. O_DIRECT may be neither opened with nor added later; `openat2` (whose flags seccomp cannot
    read) answers ENOSYS; buffered reads, whose waits SIGKILL ends, still work."""
    ep, out = attacker(jail, f"""
        import errno, fcntl
        res = {{}}
        for name, call in (('open', lambda: libc.syscall(2, {ZONE!r}.encode(), os.O_RDONLY | os.O_DIRECT)),
                           ('openat', lambda: libc.syscall(257, -100, {ZONE!r}.encode(), os.O_RDONLY | os.O_DIRECT))):
            res[name] = errno_of(call())
        try:
            os.open({ZONE!r}, os.O_RDONLY | os.O_DIRECT)
            res['os.open'] = 'allowed'
        except OSError as exc:
            res['os.open'] = errno.errorcode[exc.errno]
        fd = os.open({ZONE!r}, os.O_RDONLY)
        try:
            fcntl.fcntl(fd, fcntl.F_SETFL, os.O_DIRECT)
            res['F_SETFL O_DIRECT'] = 'allowed'
        except OSError as exc:
            res['F_SETFL O_DIRECT'] = errno.errorcode[exc.errno]
        fcntl.fcntl(fd, fcntl.F_SETFL, os.O_NONBLOCK)  # other status flags still change
        res['openat2'] = errno_of(libc.syscall(437, -100, {ZONE!r}.encode(), 0, 0))
        plain = len(os.read(fd, 4))
        return {{'refused': {{k: v for k, v in res.items() if k != 'openat2'}}, 'openat2': res['openat2'],
                'plain read': plain, 'flags': fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_DIRECT}}
    """)
    try:
        assert out.ok, out
        assert set(out.result["refused"].values()) == {"EPERM"}, out.result
        assert out.result["openat2"] == "ENOSYS" and out.result["plain read"] == 4 and out.result["flags"] == 0
        assert ep.call("ping", {}).ok
    finally:
        ep.close()


def test_file_pages_cannot_be_prefetched_into_the_units_disk_queue(jail: SandboxPool, guard) -> None:
    """madvise(MADV_WILLNEED) on every other page of cold /usr files queued 140,000 reads behind the unit's
    throttle in 0.4 s: they drained for minutes after the unit was gone, and every reader of those pages
    (other units and pools, the host) waited. MADV_POPULATE_READ/WRITE and mmap(MAP_POPULATE) are the
    same prefetch; a page fault on the mapping still reads what it needs."""
    ep, out = attacker(jail, f"""
        import mmap
        res = {{}}
        fd = os.open({ZONE!r}, os.O_RDONLY)
        libc.mmap.restype = ctypes.c_void_p
        libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
        mapped = ctypes.c_void_p(libc.mmap(None, 4096, mmap.PROT_READ, mmap.MAP_PRIVATE, fd, 0))
        for advice, number in (('MADV_WILLNEED', 3), ('MADV_POPULATE_READ', 22), ('MADV_POPULATE_WRITE', 23)):
            res[advice] = errno_of(libc.syscall(28, mapped, 4096, number))
        populated = libc.mmap(None, 4096, mmap.PROT_READ, mmap.MAP_PRIVATE | 0x8000, fd, 0)
        res['MAP_POPULATE'] = errno_of(-1 if populated in (None, 2**64 - 1) else 0)
        first = ctypes.string_at(mapped, 4)  # a fault on the plain mapping still reads the page
        return {{'refused': res, 'first bytes': len(first)}}
    """)
    try:
        assert out.ok, out
        assert set(out.result["refused"].values()) == {"EPERM"}, out.result
        assert out.result["first bytes"] == 4
        assert ep.call("ping", {}).ok
    finally:
        ep.close()


def test_page_merging_and_host_wide_barriers_are_refused(jail: SandboxPool, guard) -> None:
    """Kernel same-page merging (where the host enables KSM) merges equal pages of different units; the
    time a write takes to unmerge one then tells a unit what another one holds. MEMBARRIER_CMD_GLOBAL
    waits for every CPU of the host."""
    ep, out = attacker(jail, """
        import mmap
        page = mmap.mmap(-1, 4096)
        addr = ctypes.addressof(ctypes.c_char.from_buffer(page))
        return {'MADV_MERGEABLE': errno_of(libc.syscall(28, ctypes.c_void_p(addr), 4096, 12)),
                'PR_SET_MEMORY_MERGE': errno_of(libc.syscall(157, 67, 1, 0, 0, 0)),
                'membarrier': errno_of(libc.syscall(324, 1, 0, 0))}
    """)
    try:
        assert out.ok and set(out.result.values()) == {"EPERM"}, out
        assert ep.call("ping", {}).ok
    finally:
        ep.close()


STDLIB_ENV = '''
import concurrent.futures, decimal, hashlib, io, json, logging, mmap, queue, random, sqlite3, threading, time
import uuid, zoneinfo, datetime


class Everyday:
    """What generated env classes and BFCL's classes reach for: threads, locks with timeouts, pools,
    queues, sqlite in memory, zoneinfo, anonymous mmaps, logging."""

    def __init__(self, init_config=None):
        self.log = []

    def run(self) -> dict:
        out = {}
        results = []
        workers = [threading.Thread(target=lambda i=i: results.append(i * i)) for i in range(8)]
        for t in workers:
            t.start()
        for t in workers:
            t.join(timeout=5)
        out["threads"] = sorted(results)
        with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
            out["pool"] = list(pool.map(lambda x: x + 1, range(5)))
        lock = threading.Lock()
        lock.acquire()
        out["lock timeout"] = lock.acquire(timeout=0.05)
        event = threading.Event()
        threading.Timer(0.02, event.set).start()
        out["event"] = event.wait(timeout=5)
        cond = threading.Condition()
        with cond:
            out["condition timeout"] = cond.wait(timeout=0.02)
        q = queue.Queue()
        threading.Thread(target=lambda: q.put("hi")).start()
        out["queue"] = q.get(timeout=5)
        time.sleep(0.01)
        db = sqlite3.connect(":memory:")
        db.execute("create table t (x)")
        db.executemany("insert into t values (?)", [(1,), (2,)])
        out["sqlite"] = db.execute("select sum(x) from t").fetchone()[0]
        out["zone"] = str(datetime.datetime(2026, 1, 1, tzinfo=zoneinfo.ZoneInfo("Asia/Kathmandu")).utcoffset())
        anon = mmap.mmap(-1, 1 << 16)
        anon[:5] = b"hello"
        out["mmap"] = anon[:5].decode()
        stream = io.StringIO()
        logging.basicConfig(stream=stream, level=logging.INFO, force=True)
        logging.getLogger("env").info("logged")
        out["logging"] = "logged" in stream.getvalue()
        out["misc"] = [str(decimal.Decimal("1.10") * 3), len(hashlib.sha256(b"x").hexdigest()),
                       len(str(uuid.uuid4())), 0 <= random.random() < 1, json.loads("[1]")]
        return out
'''


def test_stdlib_paths_env_code_uses_still_work_under_the_filter(jail: SandboxPool) -> None:
    with jail.open_episode(STDLIB_ENV, "Everyday", {}) as ep:
        out = ep.call("run", {})
    assert out.ok, out.error
    assert out.result == {
        "threads": [0, 1, 4, 9, 16, 25, 36, 49], "pool": [1, 2, 3, 4, 5], "lock timeout": False, "event": True,
        "condition timeout": False, "queue": "hi", "sqlite": 3, "zone": "5:45:00", "mmap": "hello",
        "logging": True, "misc": ["3.30", 64, 36, True, [1]],
    }
    assert benign_call_works(jail)
