"""Isolation units: how the zygote gives every episode and every check its own namespaces (jail side,
standard library only; copied next to worker.py).

`clone_unit` forks the zygote straight into fresh user, pid, IPC and mount namespaces (the raw `clone`
syscall: `os.fork` takes no flags, and `unshare(CLONE_NEWPID)` works only once per process). The child,
the unit's member, is pid 1 of its own pid namespace; it mounts a private `/proc` showing only that
namespace (`subset=pid,hidepid=invisible`), hardens itself and only then runs untrusted code. When it
dies, its namespaces die with it. One clone per unit: docs/sandbox.md compares this with a separate
init process (two forks per unit, about twice the cost) and with a fresh bwrap jail per unit.

Why each piece:
* own pid namespace: `kill`, `prlimit64`, `F_SETOWN`, `pidfd_open`, `sched_setaffinity` cannot even
  name another unit, the zygote or bwrap's init;
* private `/proc`: `/proc/<pid>/mem|fd|root|cwd|environ` of other processes do not exist;
* own IPC namespace: SysV objects (also refused by seccomp) die with the unit;
* own mount namespace: room for the private `/proc`, and the jail's shared `/dev/pts` covered;
* own user namespace: RLIMIT_NPROC counts this unit's threads only, and the capabilities it grants
  exist solely to mount the private `/proc`; the member drops all of them before any untrusted code;
* `PR_SET_DUMPABLE 0` (set by the zygote before it forks anything, inherited): even a process that
  could name another one may not ptrace it or open its `/proc` files, because none holds
  CAP_SYS_PTRACE in the jail's user namespace, which owns every unit's memory.

Being its namespace's init, the member ignores signals it sends *itself* without a handler (the kernel
protects a pid-namespace init); signals from the zygote and the host (SIGKILL, SIGSTOP/SIGCONT) and
faults (SIGSEGV, ...) work as usual. So the per-call CPU window gets a handler (exit with 128+SIGXCPU,
reported as SIGXCPU), and `os.abort()` ends in glibc's fallback (SIGSEGV) rather than SIGABRT.
"""

import ctypes
import errno
import json
import os
import resource
import select
import signal
import socket

CLONE_NEWNS, CLONE_NEWIPC, CLONE_NEWUSER, CLONE_NEWPID = 0x00020000, 0x08000000, 0x10000000, 0x20000000
UNIT_NAMESPACES = CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWNS
SYS_CLONE = {"x86_64": 56, "aarch64": 220}
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 0x1, 0x2, 0x4, 0x8
PROC_OPTIONS = b"subset=pid,hidepid=invisible"
PR_SET_PDEATHSIG, PR_CAPBSET_DROP, PR_CAP_AMBIENT = 1, 24, 47
PR_CAP_AMBIENT_CLEAR_ALL = 4
INTERNAL_ERROR = 70  # the member could not set itself up: the zygote, not the env, is at fault
CPU_WINDOW_EXCEEDED = 128 + signal.SIGXCPU  # exit status a unit's member uses for its per-call CPU window

_libc = ctypes.CDLL(None, use_errno=True)
_libc_gil = ctypes.PyDLL(None, use_errno=True)  # keeps the GIL across the call, as os.fork does


def clone_unit() -> int:
    """`os.fork()` into fresh user/pid/IPC/mount namespaces; 0 in the child (pid 1 of its namespace).

    CPython's own fork hooks run around the raw syscall exactly as in `os.fork` (import lock, at-fork
    callbacks, thread state); the zygote is single-threaded, so nothing else can hold a lock."""
    nr = SYS_CLONE.get(os.uname().machine)
    if nr is None:
        raise OSError(errno.ENOSYS, f"no clone syscall number known for {os.uname().machine}")
    api = ctypes.pythonapi
    api.PyOS_BeforeFork()
    pid = _libc_gil.syscall(ctypes.c_long(nr), ctypes.c_ulong(UNIT_NAMESPACES | signal.SIGCHLD),
                            ctypes.c_void_p(0), ctypes.c_void_p(0), ctypes.c_void_p(0), ctypes.c_void_p(0))
    err = ctypes.get_errno()
    if pid == 0:
        api.PyOS_AfterFork_Child()
        return 0
    api.PyOS_AfterFork_Parent()
    if pid < 0:
        raise OSError(err, f"clone into new namespaces failed: {os.strerror(err)}")
    return pid


def mount_private_proc() -> None:
    if _libc.mount(b"proc", b"/proc", b"proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, PROC_OPTIONS) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"mounting a private /proc failed: {os.strerror(err)}")


def hide_shared_devpts() -> None:
    """Cover the jail's /dev/pts (one devpts instance for every unit of the jail: a pty one unit opens
    another could open too, and ptys count against a machine-wide maximum) with an empty read-only tmpfs;
    /dev/ptmx, a link into it, then leads nowhere."""
    if os.path.isdir("/dev/pts") and _libc.mount(b"none", b"/dev/pts", b"tmpfs",
                                                   MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, b"size=4k,mode=0") != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"covering /dev/pts failed: {os.strerror(err)}")


def close_fds_except(keep: set[int]) -> None:
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        if fd not in keep:
            try:
                os.close(fd)
            except OSError:
                pass


def report(sock: socket.socket, message: bytes) -> None:
    """One setup message to the host (JSON); the kernel adds our pid, as the host's pid namespace sees it."""
    try:
        sock.send(message)
    except OSError:
        pass


def enter_unit(ready: socket.socket) -> None:
    """First steps of a freshly cloned member (pid 1 of its namespace): the private /proc, no shared ptys.
    Exits on failure."""
    try:
        mount_private_proc()
        hide_shared_devpts()
    except OSError as exc:
        report(ready, json.dumps({"ok": False, "error": f"unit: {exc}"[:400]}).encode())
        os._exit(INTERNAL_ERROR)


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


# Built once in the zygote (a class and buffers made in a fresh unit cost page faults and Python).
_CAP_HEADER = _CapHeader(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3, this thread
_CAP_DATA = (ctypes.c_uint32 * 6)()  # all zero: no capability in any set
_prctl, _capset = _libc.prctl, _libc.capset


def drop_capabilities() -> None:
    """Empty the bounding, ambient, effective, permitted and inheritable sets (the unit's user namespace
    granted all of them). Harmless no-ops where we hold none (the shared mode)."""
    for cap in range(64):
        if _prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 and ctypes.get_errno() == errno.EINVAL:
            break  # past the last capability this kernel knows
    _prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    if _capset(ctypes.byref(_CAP_HEADER), _CAP_DATA) != 0:
        raise OSError(ctypes.get_errno(), "capset failed")


def apply_rlimits(limits: dict) -> None:
    mib = 1 << 20
    resource.setrlimit(resource.RLIMIT_AS, (limits["memory_mb"] * mib,) * 2)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limits["fsize_mb"] * mib,) * 2)
    resource.setrlimit(resource.RLIMIT_NOFILE, (limits["nofile"],) * 2)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_NPROC, (limits["nproc"],) * 2)
    resource.setrlimit(resource.RLIMIT_SIGPENDING, (limits["sigpending"],) * 2)
    resource.setrlimit(resource.RLIMIT_CPU, (limits["cpu_budget_s"],) * 2)


def harden_member(keep: set[int], limits: dict, install_seccomp) -> None:
    """Everything a member does before untrusted code may run, in this order: own session, die with the
    init, default signals, fds 0-2 on /dev/null and nothing else open but `keep`, no capabilities,
    rlimits, seccomp. Raises on any failure (the caller exits with INTERNAL_ERROR)."""
    os.setsid()
    _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGCHLD, signal.SIGPIPE):
        signal.signal(sig, signal.SIG_DFL)
    if os.getpid() == 1:  # a pid-namespace init ignores a default-action SIGXCPU: end the call ourselves
        signal.signal(signal.SIGXCPU, lambda *_: os._exit(CPU_WINDOW_EXCEEDED))
    null = os.open("/dev/null", os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    close_fds_except({0, 1, 2, *keep})
    drop_capabilities()
    apply_rlimits(limits)
    if limits.get("seccomp"):
        why = install_seccomp()
        if why is not None:
            raise OSError(errno.EPERM, f"seccomp requested but failed: {why}")


def become_spare() -> None:
    """First steps of a pair unit's spare, just forked by the hardened member (worker.py): it is not its
    namespace's init, so SIGXCPU may kill it as usual; and a fork clears the parent-death signal."""
    signal.signal(signal.SIGXCPU, signal.SIG_DFL)
    _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def probe_units(timeout_s: float = 10.0) -> str | None:
    """Can this jail make units? Clone one that must see only itself in its private /proc; None = yes."""
    theirs, ours = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    try:
        pid = clone_unit()
    except OSError as exc:
        theirs.close()
        ours.close()
        return str(exc)
    if pid == 0:
        ours.close()
        enter_unit(theirs)
        seen = sorted(name for name in os.listdir("/proc") if name.isdigit())
        report(theirs, b"ok" if seen == ["1"] else f"private /proc shows {seen}".encode()[:300])
        os._exit(0)
    theirs.close()
    answer = ours.recv(1000) if select.select([ours], [], [], timeout_s)[0] else b""
    ours.close()
    try:
        os.kill(pid, signal.SIGKILL)
    except OSError:
        pass
    os.waitpid(pid, 0)
    if answer == b"ok":
        return None
    return answer.decode(errors="replace") or "the probe unit did not answer"
