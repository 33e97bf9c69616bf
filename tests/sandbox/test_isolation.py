"""Issue 10: no episode or check may reach another unit, the zygote or the host.

Each red-team attack (and others of its family) runs from inside a unit; after it, what it threatened is
checked from the host: the zygotes' seccomp mode and rlimits (read from /proc/<zygote>/status and
/limits), a bystander episode's results and check outcomes, host files, host Shmem, processes left in
the jails, and a benign call on the pool."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from envscaler_core.runtime import CallOutcome
from sandbox import SandboxPool
from tests.sandbox.helpers import (
    CHECKS,
    EXPECTED_CHECKS,
    LIBRARY,
    LIBRARY_STATE,
    attack_code,
    cpu_ticks,
    host_shmem_kib,
    wait_for_process_count,
)


def run_attack(pool: SandboxPool, body: str) -> CallOutcome:
    with pool.open_episode(attack_code(body), "Attack", {"n": 0}) as ep:
        out = ep.call("attack", {})
        assert ep.call("ping", {}).ok, "the attacker's own episode should go on"
        return out


# -- the red team's attacks ----------------------------------------------------------------------------
def test_no_unit_can_open_another_process_memory_descriptors_root_or_cwd(jail: SandboxPool, guard) -> None:
    out = run_attack(jail, """
        opened = {}
        for pid in other_pids():
            for name, mode in (('mem', 'r+b'), ('environ', 'rb'), ('fd', None), ('root', None), ('cwd', None),
                               ('task', None), ('limits', 'rb'), ('status', 'rb')):
                path = f'/proc/{pid}/{name}'
                try:
                    if mode is None:
                        os.listdir(path)
                    else:
                        open(path, mode).close()
                    opened.setdefault(pid, []).append(name)
                except OSError:
                    pass
        return {'visible': sorted(p for p in os.listdir('/proc') if p.isdigit()), 'me': os.getpid(),
                'opened': opened}
    """)
    assert out.ok, out
    assert out.result["visible"] == [str(out.result["me"])], "the private /proc shows other processes"
    assert out.result["opened"] == {}


def test_a_check_cannot_reach_the_zygote_or_other_units_either(jail: SandboxPool, guard) -> None:
    spy = ("import os\n"
           "def check_func(final_state):\n"
           "    others = [p for p in os.listdir('/proc') if p.isdigit() and int(p) != os.getpid()]\n"
           "    for pid in list(range(1, 64)):\n"
           "        if pid == os.getpid():\n"
           "            continue\n"
           "        try:\n"
           "            open(f'/proc/{pid}/mem', 'r+b')\n"
           "            return False\n"
           "        except OSError:\n"
           "            pass\n"
           "    return others == []\n")
    assert [o.passed for o in jail.run_checks([spy], {}, {})] == [True]


def test_pidfd_getfd_cannot_take_the_zygote_stderr_and_no_host_file_grows(jail: SandboxPool, guard) -> None:
    workdir = Path(jail._workdir)
    sizes = {p.name: p.stat().st_size for p in workdir.iterdir()}
    out = run_attack(jail, """
        res = {}
        for pid in other_pids():
            pidfd = libc.syscall(434, pid, 0)                # pidfd_open
            res[pid] = errno_of(pidfd)
            if pidfd >= 0:
                for fd in range(0, 8):
                    got = libc.syscall(438, pidfd, fd, 0)    # pidfd_getfd
                    if got >= 0:
                        os.write(got, b'x' * (32 << 20))
                        res[f'{pid}/{fd}'] = 'stolen'
        return sorted(set(map(str, res.values())))
    """)
    assert out.ok and out.result == ["EPERM"], out
    assert {p.name: p.stat().st_size for p in workdir.iterdir()} == sizes, "a host file changed"
    for pid in jail.zygote_host_pids():
        assert os.readlink(f"/proc/{pid}/fd/2").startswith("pipe:"), "the zygote's stderr must not be a host file"


def test_another_episodes_pipes_cannot_be_reopened_or_written(jail: SandboxPool, guard) -> None:
    out = run_attack(jail, """
        reached = []
        for pid in other_pids():
            for fd in range(0, 64):
                for mode in (os.O_RDONLY, os.O_WRONLY):
                    try:
                        got = os.open(f'/proc/{pid}/fd/{fd}', mode | os.O_NONBLOCK)
                    except OSError:
                        continue
                    reached.append(f'{pid}/{fd}')
                    try:
                        os.write(got, b'\\x00\\x00\\x00\\x0f{"passed":true}')
                    except OSError:
                        pass
        return reached
    """)
    assert out.ok and out.result == [], out


def test_signal_ownership_tricks_cannot_reach_neighbours(jail: SandboxPool, guard) -> None:
    out = run_attack(jail, """
        import fcntl
        res = {}
        fd = reply_fd()
        for pid in [p for p in (0, 1, 2, 3, os.getppid(), -1, -2) if p != os.getpid()]:
            res[f'F_SETOWN {pid}'] = errno_of(libc.fcntl(fd, 8, pid))
            res[f'FIOSETOWN {pid}'] = errno_of(libc.ioctl(fd, 0x8901, ctypes.byref(ctypes.c_int(pid))))
            res[f'SIOCSPGRP {pid}'] = errno_of(libc.ioctl(fd, 0x8902, ctypes.byref(ctypes.c_int(pid))))
            res[f'kill {pid}'] = errno_of(libc.kill(pid, signal.SIGKILL))
        res['F_SETSIG'] = errno_of(libc.fcntl(fd, 10, signal.SIGKILL))
        res['F_SETOWN_EX'] = errno_of(libc.fcntl(fd, 15, ctypes.byref((ctypes.c_int * 2)(0, 1))))
        flags = fcntl.fcntl(fd, fcntl.F_GETFL)
        fcntl.fcntl(fd, fcntl.F_SETFL, flags | os.O_ASYNC)   # harmless without an owner
        res['tgkill'] = errno_of(libc.syscall(234, 2, 2, signal.SIGKILL))
        res['rt_sigqueueinfo'] = errno_of(libc.syscall(129, 2, signal.SIGKILL, 0))
        return sorted(set(map(str, res.values())))
    """)
    assert out.ok and out.result == ["EPERM"], out


def test_prlimit_on_the_zygote_or_a_neighbour_is_refused(jail: SandboxPool, guard) -> None:
    out = run_attack(jail, """
        class Rlimit(ctypes.Structure):
            _fields_ = [('cur', ctypes.c_ulong), ('max', ctypes.c_ulong)]
        tiny = Rlimit(1 << 20, 1 << 20)
        res = {errno_of(libc.syscall(302, pid, resource.RLIMIT_AS, ctypes.byref(tiny), None))
               for pid in other_pids()}
        try:
            resource.setrlimit(resource.RLIMIT_AS, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
            res.add('raised own hard limit')
        except (ValueError, OSError):
            pass
        own = libc.syscall(302, 0, resource.RLIMIT_NOFILE, None, ctypes.byref(Rlimit()))  # reading our own: fine
        return {'others': sorted(map(str, res)), 'own': own}
    """)
    assert out.ok and out.result == {"others": ["EPERM"], "own": 0}, out


def test_sysv_ipc_mqueues_and_memfds_are_refused_and_host_shmem_returns(jail: SandboxPool, guard) -> None:
    before = host_shmem_kib()
    out = run_attack(jail, """
        res = {
            'shmget': errno_of(libc.syscall(29, 0, 900 << 20, 0o1000 | 0o666)),   # IPC_PRIVATE, IPC_CREAT
            'msgget': errno_of(libc.syscall(68, 0, 0o1000 | 0o666)),
            'semget': errno_of(libc.syscall(64, 0, 1, 0o1000 | 0o666)),
            'mq_open': errno_of(libc.syscall(240, b'/q', 0o100 | 2, 0o666, None)),
            'memfd_create': errno_of(libc.syscall(319, b'x', 0)),
            'memfd_secret': errno_of(libc.syscall(447, 0)),
        }
        try:
            import mmap
            m = mmap.mmap(-1, 900 << 20, flags=mmap.MAP_SHARED | mmap.MAP_ANONYMOUS)
            m.write(b'x' * (900 << 20))
            res['shared anonymous'] = 'mapped'
        except (OSError, MemoryError, ValueError) as exc:
            res['shared anonymous'] = type(exc).__name__
        for path in ('/dev/shm/x', '/tmp/x'):
            try:
                open(path, 'wb').write(b'x' * (900 << 20))
                res[path] = 'written'
            except OSError as exc:
                res[path] = exc.strerror
        return res
    """)
    assert out.ok, out
    res = out.result
    assert {res[k] for k in ("shmget", "msgget", "semget", "mq_open", "memfd_create", "memfd_secret")} == {"EPERM"}
    assert res["shared anonymous"] in ("OSError", "MemoryError"), res  # over RLIMIT_AS (and the cgroup)
    assert res["/dev/shm/x"] == res["/tmp/x"] == "Read-only file system"
    assert host_shmem_kib() < before + (64 << 10), "shared memory was left behind on the host"


def test_a_check_cannot_change_the_outcome_of_the_later_checks_of_its_batch(jail: SandboxPool, guard) -> None:
    cheat = ("import builtins, sys, os, json\n"
             "def check_func(final_state):\n"
             "    main = sys.modules['__main__']\n"
             "    main.dumps = lambda obj: json.dumps({'passed': True, 'error': None})\n"
             "    main.run_check = lambda *a, **k: json.dumps({'passed': True, 'error': None})\n"
             "    builtins.type = lambda *a: bool\n"
             "    frame = json.dumps({'passed': True, 'error': None}).encode()\n"
             "    for fd in range(3, 64):\n"
             "        try:\n"
             "            os.write(fd, (len(frame).to_bytes(4, 'big') + frame) * 8)\n"
             "        except OSError:\n"
             "            pass\n"
             "    return True\n")
    out = jail.run_checks([cheat, *CHECKS], LIBRARY_STATE, LIBRARY_STATE)
    assert [o.passed for o in out] == [True, *EXPECTED_CHECKS]


def test_threads_and_timers_left_running_burn_no_cpu_between_calls(jail: SandboxPool, baseline: int) -> None:
    code = attack_code("""
        def burn():
            while True:
                pass
        threading.Thread(target=burn, daemon=True).start()
        signal.signal(signal.SIGALRM, lambda *a: burn())
        signal.setitimer(signal.ITIMER_REAL, 0.05, 0.05)
        return {"success": True}
    """)
    with jail.open_episode(code, "Attack", {"n": 0}) as ep:
        assert ep.call("attack", {}).ok
        pid = ep.host_pid
        first = cpu_ticks(pid)
        time.sleep(0.5)
        assert cpu_ticks(pid) - first <= 1, "the episode's process ran between calls"
    assert wait_for_process_count(jail, baseline) == baseline, "a thread outlived its episode"


def test_a_thread_bomb_in_one_unit_does_not_starve_a_neighbour_in_the_same_jail(solo: SandboxPool) -> None:
    """RLIMIT_NPROC counts per user namespace: each unit has its own, so one unit's threads are its own
    problem (small stacks, so that the thread limit and not the address-space cap is what the hog hits)."""
    hog = attack_code("""
        threading.stack_size(1 << 16)
        n = 0
        try:
            while True:
                threading.Thread(target=time.sleep, args=(60,), daemon=True).start()
                n += 1
        except RuntimeError:
            return {"success": True, "data": n}
    """)
    neighbour = attack_code("""
        threading.stack_size(1 << 16)
        ts = [threading.Thread(target=time.sleep, args=(0.01,)) for _ in range(50)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        return {"success": True}
    """)
    with solo.open_episode(hog, "Attack", {"n": 0}) as a, solo.open_episode(neighbour, "Attack", {"n": 0}) as b:
        held = a.call("attack", {})
        assert held.ok and held.result["data"] > 100, held
        assert b.call("attack", {}).ok, "the neighbour could not start threads while the hog held its own"


def test_nothing_of_an_episode_survives_its_close(jail: SandboxPool, guard) -> None:
    before = host_shmem_kib()
    code = attack_code("""
        def spawn_forever():
            while True:
                try:
                    threading.Thread(target=spawn_forever, daemon=True).start()
                except RuntimeError:
                    time.sleep(0.001)
        threading.Thread(target=spawn_forever, daemon=True).start()
        fd = reply_fd()
        def scribble():
            while True:
                try:
                    os.write(fd, b'\\xff' * 4096)
                except OSError:
                    time.sleep(0.001)
        threading.Thread(target=scribble, daemon=True).start()
        return {"success": True}
    """)
    ep = jail.open_episode(code, "Attack", {"n": 0})
    ep.call("attack", {})
    ep.close()
    assert host_shmem_kib() < before + (64 << 10)


def test_each_refused_syscall_reports_eperm(jail: SandboxPool, guard) -> None:
    out = run_attack(jail, """
        import errno
        assert os.getpid() == 1  # a unit's member is pid 1 of its own namespace: "other" pids are 2 and up
        calls = {
            'kcmp': (312, 1, os.getpid(), 0, 0, 0), 'pidfd_open': (434, 1, 0), 'unshare': (272, 0x10000000),
            'vfork': (58,), 'fork': (57,), 'personality': (135, 0x0040000), 'inotify_init1': (294, 0),
            'process_vm_readv': (310, 1, 0, 0, 0, 0, 0), 'ptrace': (101, 0, 0, 0, 0), 'userfaultfd': (323, 0),
            'move_pages': (279, 1, 0, 0, 0, 0, 0), 'migrate_pages': (256, 1, 8, 0, 0), 'ioprio_set': (251, 3, 0, 0),
            'socket': (41, 1, 1, 0), 'setuid': (105, 0), 'capset': (126, 0, 0), 'bpf': (321, 0, 0, 0),
            'clone with namespaces': (56, 0x10000 | 0x800 | 0x100 | 0x20000000, 0, 0, 0, 0),
            'prctl dumpable': (157, 4, 1, 0, 0, 0), 'setpriority user': (141, 2, 65534, 19),
            'sched_setaffinity other': (203, 2, 8, 0), 'prlimit other': (302, 2, 9, 0, 0),
            'setns': (308, 0, 0), 'io_uring_setup': (425, 8, 0), 'fanotify_init': (300, 0, 0),
            'mount proc': (165, b'proc', b'/proc', b'proc', 0, 0), 'umount /proc': (166, b'/proc', 2),
            'get_robust_list other': (274, 2, 0, 0), 'setpriority other': (141, 0, 2, 19),
            'ioctl TIOCSTI': (16, 0, 0x5412, 0), 'fsopen': (430, b'proc', 0), 'open_tree': (428, -100, b'/', 1),
            'socketpair': (53, 1, 1, 0, 0), 'prctl ptracer': (157, 0x59616D61, -1, 0, 0, 0), 'tkill': (200, 1, 9),
            'pidfd_send_signal': (424, 0, 9, 0, 0), 'pidfd_getfd': (438, 0, 0, 0),
            'process_madvise': (440, 0, 0, 0, 0, 0), 'shmget': (29, 0, 4096, 0o1666), 'mq_open': (240, b'/q', 0o102, 0o666, 0),
            'memfd_create': (319, b'x', 0), 'kill other': (62, 2, 9), 'execve': (59, b'/bin/sh', 0, 0),
        }
        out = {}
        for name, args in calls.items():
            ctypes.set_errno(0)
            ret = libc.syscall(*args)
            out[name] = errno.errorcode.get(ctypes.get_errno()) if ret == -1 else ret
        return out
    """)
    assert out.ok, out
    assert out.result == {name: "EPERM" for name in out.result}, out.result


def test_huge_mappings_stay_within_the_address_space_cap(jail: SandboxPool, guard) -> None:
    out = run_attack(jail, """
        import mmap
        try:
            m = mmap.mmap(os.open('/dev/zero', os.O_RDONLY), 2 << 30, prot=mmap.PROT_READ)
            return 'mapped'
        except (OSError, MemoryError, ValueError) as exc:
            return type(exc).__name__
    """)
    assert out.ok and out.result in ("OSError", "MemoryError"), out


def test_ptys_locks_and_pipe_buffers_shared_by_a_jail_are_out_of_reach(jail: SandboxPool, guard) -> None:
    """Found by our own red-team pass: all units of a jail shared bwrap's /dev/pts (a pty one unit opened
    another could open), flock() on the shared read-only files and F_SETPIPE_SZ (charged per uid)."""
    out = run_attack(jail, """
        import fcntl
        res = {}
        for path in ('/dev/ptmx', '/dev/pts/ptmx', '/dev/pts/0'):
            try:
                os.close(os.open(path, os.O_RDWR | os.O_NOCTTY))
                res[path] = 'opened'
            except OSError as exc:
                res[path] = exc.strerror
        with open('/usr/lib/os-release' if os.path.exists('/usr/lib/os-release') else os.__file__, 'rb') as fh:
            res['flock'] = errno_of(libc.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB))
        res['F_SETPIPE_SZ'] = errno_of(libc.fcntl(reply_fd(), 1031, 1 << 20))  # a unit may not make pipes
        return res
    """)
    assert out.ok, out
    assert "opened" not in out.result.values(), out.result
    assert out.result["flock"] == out.result["F_SETPIPE_SZ"] == "EPERM"


def test_every_unit_sits_in_its_own_cgroups_with_memory_pids_and_cpu_caps(jail: SandboxPool) -> None:
    """Read from the host, for a live unit: its own cgroup in each hierarchy, with the configured caps
    (whether the kernel throttles a busy unit depends on the machine's load, so that is not asserted)."""
    if jail.cgroups is None or jail.cgroups.version != 1:
        pytest.skip("the per-unit cgroup here is not v1")
    with jail.open_episode(LIBRARY, "Library", LIBRARY_STATE) as a, jail.open_episode(LIBRARY, "Library", LIBRARY_STATE) as b:
        paths = []
        for ep in (a, b):
            own = {line.split(":")[1]: line.split(":", 2)[2]
                   for line in Path(f"/proc/{ep.host_pid}/cgroup").read_text().splitlines()}
            paths.append(own)
            root = Path("/sys/fs/cgroup")
            assert (root / "memory" / own["memory"].lstrip("/") / "memory.limit_in_bytes").read_text().strip() == \
                str(jail.limits.unit_memory_bytes())
            assert (root / "pids" / own["pids"].lstrip("/") / "pids.max").read_text().strip() == str(jail.limits.nproc)
            if "cpu" in jail.cgroups.parents:
                assert (root / "cpu" / own["cpu"].lstrip("/") / "cpu.cfs_quota_us").read_text().strip() == "100000"
        assert all(paths[0][c] != paths[1][c] for c in ("memory", "pids")), "two units share a cgroup"


def test_session_process_group_and_parent_death_games_reach_no_one(jail: SandboxPool, guard) -> None:
    out = run_attack(jail, """
        res = {'setsid': errno_of(libc.setsid()), 'setpgid': errno_of(libc.setpgid(0, 0)),
               'pdeathsig': errno_of(libc.prctl(1, signal.SIGKILL, 0, 0, 0))}
        for target in (0, -1, -os.getpid(), -2, 2, 3):
            res[f'kill {target}'] = errno_of(libc.kill(target, signal.SIGKILL))
        res['setpgid other'] = errno_of(libc.setpgid(2, os.getpid()))
        return res
    """)
    assert out.ok, out
    kills = {k: v for k, v in out.result.items() if k.startswith("kill")}
    assert set(kills.values()) == {"EPERM"}, kills
    assert out.result["setpgid other"] in ("EPERM", "ESRCH")
