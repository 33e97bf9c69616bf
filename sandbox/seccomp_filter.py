"""The sandbox's seccomp filter: a hand-assembled classic-BPF program, loaded by every jailed process.

Runs inside the jail next to worker.py (standard library only). x86_64 only; elsewhere
`install_seccomp` says why it is unavailable and the pool reports seccomp as OFF.

Default ALLOW, with EPERM for what namespaces do not already close (docs/sandbox.md, threat model):
new processes and programs, sockets, other processes' memory, limits, scheduling and signals
(`kill`/`tgkill` only to ourselves; `prlimit64`, `sched_set*`, `setpriority`, `ioprio_set` only on pid
0 or ourselves), signal-owner tricks (`fcntl` F_SETOWN/F_SETOWN_EX/F_SETSIG/F_SETLEASE/F_NOTIFY, the
ioctls FIOSETOWN/SIOCSPGRP/TIOCSTI/...), SysV IPC and POSIX mqueues, memfds (anonymous memory
outside RLIMIT_AS), inotify/fanotify (watching files other units use), `flock` and F_SETPIPE_SZ
(resources shared by every unit of the uid), `prctl(PR_SET_DUMPABLE)`,
namespaces, mounts, kernel objects and identity changes. Also what the kernel keeps per host or per uid
and so shares across namespaces (a second red team): Linux AIO (the host-wide `fs.aio-nr`; a pending
poll also kept files alive past RLIMIT_NOFILE), record locks (F_GETLK/F_SETLK/F_SETLKW and OFD forms),
futex operations that are not process-private (keyed by inode on file-backed pages: a channel between
units), page-cache eviction and probes (fadvise, readahead, MADV_COLD/PAGEOUT, RWF_NOWAIT, mincore,
cachestat), prefetching (MADV_WILLNEED, MADV_POPULATE_*, mmap MAP_POPULATE) and writeback (sync,
syncfs, fsync, ...), O_DIRECT (`open`/`openat` with it, `fcntl` F_SETFL
adding it; `openat2`, whose flags seccomp cannot read, answers ENOSYS), KSM merging, membarrier, `sysinfo` (host-wide thread
count, load and free RAM: counters a unit can move and another read); in units also
`pipe`/`pipe2` and threads without CLONE_FILES (pipe buffers are charged per uid; a thread with its own
descriptor table gets RLIMIT_NOFILE again). `clone` is allowed only for threads, `clone3` answers
ENOSYS so that glibc falls back to `clone`, and the x32 ABI is refused wholesale.

Two variants. The *unit* filter above is what every process running untrusted code carries. The
*supervisor* filter (`supervisor=True`) is loaded only by the trusted pid 1 of a check-batch unit
(jail_batch.py): it lacks the process rules (threads only, signals/limits/scheduling only of itself),
so it may fork its check children and signal them (its pid namespace holds nothing else); `clone`
still may not create namespaces. Every child stacks those process rules for its own pid
(`ChildRules`) before any check runs; stacked filters apply the strictest verdict, so a check
child is held by exactly the unit filter's rules.
"""

import ctypes
import errno
import functools
import os
import socket
import struct

AUDIT_ARCH_X86_64 = 0xC000003E
X32_BIT = 0x40000000
CLONE_THREAD = 0x00010000
CLONE_NAMESPACES = 0x7E020080  # NEWNS|NEWCGROUP|NEWUTS|NEWIPC|NEWUSER|NEWPID|NEWNET|NEWTIME

DENY = {
    # sockets, new processes and programs
    "socket": 41, "connect": 42, "accept": 43, "bind": 49, "listen": 50, "socketpair": 53, "accept4": 288,
    "fork": 57, "vfork": 58, "execve": 59, "execveat": 322,
    # other processes: memory, descriptors, signals by other routes
    "ptrace": 101, "process_vm_readv": 310, "process_vm_writev": 311, "kcmp": 312, "tkill": 200,
    "rt_sigqueueinfo": 129, "rt_tgsigqueueinfo": 297, "pidfd_open": 434, "pidfd_send_signal": 424,
    "pidfd_getfd": 438, "process_madvise": 440, "process_mrelease": 448, "migrate_pages": 256,
    "move_pages": 279,
    # memory that RLIMIT_AS does not count, and kernel objects shared beyond the process
    "shmget": 29, "shmat": 30, "shmctl": 31, "shmdt": 67, "semget": 64, "semop": 65, "semctl": 66,
    "semtimedop": 220, "msgget": 68, "msgsnd": 69, "msgrcv": 70, "msgctl": 71, "mq_open": 240,
    "mq_unlink": 241, "mq_timedsend": 242, "mq_timedreceive": 243, "mq_notify": 244, "mq_getsetattr": 245,
    "memfd_create": 319, "memfd_secret": 447, "inotify_init": 253, "inotify_init1": 294,
    "inotify_add_watch": 254, "fanotify_init": 300, "fanotify_mark": 301, "userfaultfd": 323,
    "flock": 73,  # locks on the shared read-only files are a channel between units
    "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
    # budgets the kernel keeps per host or per uid, i.e. shared with every unit, jail and host process:
    # Linux AIO (fs.aio-nr is host-wide, and a pending IOCB_CMD_POLL keeps a file alive after its fd is
    # closed, which slips past RLIMIT_NOFILE into the per-uid pipe-buffer and epoll-watch accounts)
    "io_setup": 206, "io_destroy": 207, "io_getevents": 208, "io_submit": 209, "io_cancel": 210,
    "io_pgetevents": 333,
    # the host's page cache and disks: eviction (then a probe shows who read a file since) and writeback
    "fadvise64": 221, "readahead": 187, "mincore": 27, "cachestat": 451, "sync": 162, "syncfs": 306,
    "sync_file_range": 277, "fsync": 74, "fdatasync": 75,
    # futex2 calls (flags inside user memory, or shared by default); glibc 2.36 does not use them
    "futex_waitv": 449, "futex_wake": 454, "futex_wait": 455, "futex_requeue": 456,
    # barriers across every CPU of the host (MEMBARRIER_CMD_GLOBAL waits for all of them)
    "membarrier": 324,
    # host-wide counters any unit can move: sysinfo's `procs` (every thread of the host: a unit starting
    # 255 threads passed bits to another unit and flipped a check's verdict), its load averages and free
    # RAM (neighbours' memory use). glibc's sysconf(_SC_PHYS_PAGES/_SC_AVPHYS_PAGES) asks it too.
    "sysinfo": 99,
    # namespaces, mounts, kernel state, identity
    "mount": 165, "umount2": 166, "pivot_root": 155, "chroot": 161, "unshare": 272, "setns": 308,
    "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433, "move_mount": 429, "open_tree": 428,
    "mount_setattr": 442, "bpf": 321, "keyctl": 250, "add_key": 248, "request_key": 249,
    "perf_event_open": 298, "personality": 135, "reboot": 169, "kexec_load": 246, "kexec_file_load": 320,
    "init_module": 175, "finit_module": 313, "delete_module": 176, "swapon": 167, "swapoff": 168,
    "acct": 163, "syslog": 103, "iopl": 172, "ioperm": 173, "modify_ldt": 154, "quotactl": 179,
    "quotactl_fd": 443, "vhangup": 153, "sethostname": 170, "setdomainname": 171, "settimeofday": 164,
    "clock_settime": 227, "clock_adjtime": 305, "adjtimex": 159, "lookup_dcookie": 212, "uselib": 134,
    "setuid": 105, "setgid": 106, "setreuid": 113, "setregid": 114, "setresuid": 117, "setresgid": 119,
    "setgroups": 116, "setfsuid": 122, "setfsgid": 123, "capset": 126,
    "mknod": 133, "mknodat": 259, "name_to_handle_at": 303, "open_by_handle_at": 304,
}
NR_CLONE, NR_CLONE3, NR_KILL, NR_TGKILL = 56, 435, 62, 234
NR_FCNTL, NR_IOCTL, NR_PRCTL, NR_SETPRIORITY, NR_IOPRIO_SET = 72, 16, 157, 141, 251
NR_FUTEX, NR_MADVISE, NR_PREADV2, NR_PWRITEV2 = 202, 28, 327, 328
NR_OPEN, NR_OPENAT, NR_OPENAT2, F_SETFL = 2, 257, 437, 4
# Direct I/O bypasses the page cache, so every read reaches the unit's throttled disk queue; a direct-I/O
# wait is uninterruptible, so 50 threads each queueing 16 MiB outlived their unit's SIGKILL by minutes,
# stalled the zygote reaping it and took the jail (and its innocent episodes) down with them (red team
# 2026-11-26). Buffered reads wait killably, and the page cache serves what another process read.
O_DIRECT = 0o40000
CLONE_FILES = 0x00000400
# Refused in units (not in the batch supervisor, which makes its children's reply pipes): a unit gets its
# pipes from the zygote, and every pipe buffer is charged to the uid, i.e. to every unit of every jail.
UNIT_ONLY_DENY = {"pipe": 22, "pipe2": 293}
# Syscalls whose first argument is a pid: allowed only for 0 (= the caller) or the caller's own pid.
PID_FIRST = {"prlimit64": 302, "sched_setaffinity": 203, "sched_setparam": 142, "sched_setscheduler": 144,
             "sched_setattr": 314, "get_robust_list": 274}
# F_SETOWN, F_SETSIG, F_SETOWN_EX, F_SETLEASE, F_NOTIFY, F_SETPIPE_SZ (pipe buffers are charged per uid,
# i.e. to every unit of every jail at once), and the record locks F_GETLK/F_SETLK/F_SETLKW and their OFD
# forms: locks on an inode every unit can open (/dev/null, /usr files) are a channel between units
BAD_FCNTL = (8, 10, 15, 1024, 1026, 1031, 5, 6, 7, 36, 37, 38)
# MADV_COLD, MADV_PAGEOUT: on a file mapping they push host page cache out (eviction, as fadvise does);
# MADV_MERGEABLE (like PR_SET_MEMORY_MERGE): KSM would merge equal pages of different units, and the
# time a write takes to unmerge one tells a unit what another holds; MADV_WILLNEED, MADV_POPULATE_READ
# and MADV_POPULATE_WRITE start reads of file pages without waiting for them (readahead by another name):
# one unit queued 140,000 separate 4 KiB reads of cold /usr files in 0.4 s behind its 400-reads/s
# throttle; the queue drained for minutes after the unit was gone, and every reader of those files
# (other units, other pools, the host) waited on the locked pages (red team, 2026-11-26)
BAD_MADVISE = (20, 21, 12, 3, 22, 23)
NR_MMAP, MAP_POPULATE = 9, 0x8000  # mmap(MAP_POPULATE) of a file mapping is the same prefetch at map time
RWF_NOWAIT = 0x8  # preadv2/pwritev2 flag: fails instead of blocking when a page is not cached (a probe)
FUTEX_PRIVATE_FLAG, FUTEX_CMD_MASK, FUTEX_WAIT, FUTEX_WAIT_BITSET = 128, 0x7F, 0, 9
BAD_IOCTL = (0x8901, 0x8902, 0x5412, 0x540E, 0x5410, 0x541C)  # FIOSETOWN SIOCSPGRP TIOCSTI TIOCSCTTY TIOCSPGRP TIOCLINUX
BAD_PRCTL = (4, 35, 0x59616D61, 67)  # PR_SET_DUMPABLE, PR_SET_MM, PR_SET_PTRACER, PR_SET_MEMORY_MERGE

LD_W_ABS, JEQ, JSET, RET = 0x20, 0x15, 0x45, 0x06
JGE = 0x35
AND_K = 0x54  # BPF_ALU | BPF_AND | BPF_K
ALLOW, KILL_PROCESS = 0x7FFF0000, 0x80000000
EPERM_RET, ENOSYS_RET = 0x00050000 | errno.EPERM, 0x00050000 | errno.ENOSYS
EAGAIN_RET = 0x00050000 | errno.EAGAIN
NR, ARCH = 0, 4


def arg_low(i: int) -> int:
    """Offset of the low 32 bits of syscall argument i (x86_64 is little-endian; the kernel reads pids,
    fcntl and ioctl commands as 32-bit values, so the high word is irrelevant)."""
    return 16 + 8 * i


class Program:
    """A tiny assembler: forward jumps to named labels, resolved when the program is packed."""

    def __init__(self) -> None:
        self.ins: list[tuple[int, object, object, int]] = []
        self.labels: dict[str, int] = {}
        self._fresh = 0

    def label(self, name: str) -> None:
        self.labels[name] = len(self.ins)

    def fresh(self) -> str:
        self._fresh += 1
        return f"_l{self._fresh}"

    def load(self, offset: int) -> None:
        self.ins.append((LD_W_ABS, 0, 0, offset))

    def jump(self, op: int, k: int, true: object = 0, false: object = 0) -> None:
        """`true`/`false` are 0 (next instruction) or a label."""
        self.ins.append((op, true, false, k))

    def ret(self, value: int) -> None:
        self.ins.append((RET, 0, 0, value))

    def pack(self) -> bytes:
        out = []
        for pos, (code, jt, jf, k) in enumerate(self.ins):
            offsets = []
            for target in (jt, jf):
                off = 0 if target == 0 else self.labels[target] - pos - 1
                if not 0 <= off <= 255:
                    raise ValueError(f"BPF jump out of range at {pos}")
                offsets.append(off)
            out.append(struct.pack("HBBI", code, offsets[0], offsets[1], k))
        return b"".join(out)


def _one_of(p: Program, offset: int, values: tuple[int, ...], hit: str, miss: str) -> None:
    p.load(offset)
    for value in values:
        p.jump(JEQ, value, hit, 0)
    p.jump(JEQ, 0, miss, miss)  # unconditional jump to `miss`


def _process_rules(p: Program, own_pid: int) -> None:
    """What a process may do to processes: threads only (no fork), signals only to itself, limits and
    scheduling only of itself (pid 0 or its own). Expects the syscall number in the accumulator and leaves
    it there for what follows."""
    for nr in sorted(UNIT_ONLY_DENY.values()):
        p.jump(JEQ, nr, "eperm", 0)
    # a thread must share our descriptor table: one with its own table would get RLIMIT_NOFILE again
    p.jump(JEQ, NR_CLONE, 0, after := p.fresh())
    p.load(arg_low(0))
    p.jump(JSET, CLONE_THREAD, 0, "eperm")
    p.jump(JSET, CLONE_FILES, 0, "eperm")
    p.jump(JSET, CLONE_NAMESPACES, "eperm", "allow")
    p.label(after)
    for nr in (NR_KILL, NR_TGKILL):
        p.jump(JEQ, nr, 0, after := p.fresh())
        _one_of(p, arg_low(0), (own_pid,), "allow", "eperm")
        p.label(after)
    for nr in sorted(PID_FIRST.values()):
        p.jump(JEQ, nr, 0, after := p.fresh())
        _one_of(p, arg_low(0), (0, own_pid), "allow", "eperm")
        p.label(after)
    for nr, which in ((NR_SETPRIORITY, 0), (NR_IOPRIO_SET, 1)):  # PRIO_PROCESS / IOPRIO_WHO_PROCESS only
        p.jump(JEQ, nr, 0, after := p.fresh())
        _one_of(p, arg_low(0), (which,), ok := p.fresh(), "eperm")
        p.label(ok)
        _one_of(p, arg_low(1), (0, own_pid), "allow", "eperm")
        p.label(after)


@functools.lru_cache(maxsize=8)
def seccomp_program(own_pid: int, supervisor: bool = False) -> bytes:
    """The unit filter for a process whose pid (in its own namespace) is `own_pid`. Cached: a unit's member
    is always pid 1, so the zygote builds it once and every fork inherits it.

    `supervisor`: the batch supervisor's variant: the process rules are left out (it forks its check
    children and signals them; its pid namespace holds nothing else) except that `clone` still may not
    create namespaces. Each child stacks `child_rules(its pid)` on it (`ChildRules`): together, the unit filter."""
    p = Program()
    p.load(ARCH)
    p.jump(JEQ, AUDIT_ARCH_X86_64, next_ := p.fresh(), 0)
    p.ret(KILL_PROCESS)
    p.label(next_)
    p.load(NR)
    _futex_rule(p)  # first: futex is the busiest syscall that the kernel's action cache cannot answer
    # Plain denials return right after their test: BPF conditional jumps reach 255 instructions at most.
    for op, nr, value in [(JGE, X32_BIT, EPERM_RET), (JEQ, NR_CLONE3, ENOSYS_RET), (JEQ, NR_OPENAT2, ENOSYS_RET)] + [
            (JEQ, nr, EPERM_RET) for nr in sorted(DENY.values())]:
        p.jump(op, nr, 0, next_ := p.fresh())
        p.ret(value)
        p.label(next_)
    # Every rule below returns once its syscall matched, so the accumulator still holds nr for the next.
    if supervisor:
        p.jump(JEQ, NR_CLONE, 0, after := p.fresh())
        p.load(arg_low(0))
        p.jump(JSET, CLONE_NAMESPACES, "eperm", "allow")
        p.label(after)
    else:
        _process_rules(p, own_pid)
    p.jump(JEQ, NR_FCNTL, 0, after := p.fresh())
    _one_of(p, arg_low(1), BAD_FCNTL, "eperm", setfl := p.fresh())
    p.label(setfl)
    p.jump(JEQ, F_SETFL, 0, "allow")
    p.load(arg_low(2))
    p.jump(JSET, O_DIRECT, "eperm", "allow")
    p.label(after)
    for nr, arg, bad in ((NR_IOCTL, 1, BAD_IOCTL), (NR_PRCTL, 0, BAD_PRCTL), (NR_MADVISE, 2, BAD_MADVISE)):
        p.jump(JEQ, nr, 0, after := p.fresh())
        _one_of(p, arg_low(arg), bad, "eperm", "allow")
        p.label(after)
    for nr, arg, bit in ((NR_OPEN, 1, O_DIRECT), (NR_OPENAT, 2, O_DIRECT), (NR_MMAP, 3, MAP_POPULATE)):
        p.jump(JEQ, nr, 0, after := p.fresh())
        p.load(arg_low(arg))
        p.jump(JSET, bit, "eperm", "allow")
        p.label(after)
    for nr in (NR_PREADV2, NR_PWRITEV2):
        p.jump(JEQ, nr, 0, after := p.fresh())
        p.load(arg_low(5))
        p.jump(JSET, RWF_NOWAIT, "eperm", "allow")
        p.label(after)
    p.label("allow")
    p.ret(ALLOW)
    p.label("eperm")
    p.ret(EPERM_RET)
    return p.pack()


def _futex_rule(p: Program) -> None:
    """Process-private futex operations only. A shared futex on a file-backed page (a MAP_SHARED mapping,
    or a MAP_PRIVATE one not yet written: libc's own code pages) is keyed by inode and offset, the same key
    in every unit, so a shared FUTEX_WAKE in one unit wakes a FUTEX_WAIT in another (and its count says
    who waits). Shared waits answer EAGAIN ("the value changed"), which glibc's wait loops (pthread_join
    waits shared on the thread id) take as a cue to look again; every other shared operation is refused.
    Kernel-initiated shared wakes (a thread's clear_child_tid, robust lists) then reach no unit's waiter."""
    p.jump(JEQ, NR_FUTEX, 0, after := p.fresh())
    p.load(arg_low(1))
    p.jump(JSET, FUTEX_PRIVATE_FLAG, allow := p.fresh(), 0)
    p.ins.append((AND_K, 0, 0, FUTEX_CMD_MASK))
    p.jump(JEQ, FUTEX_WAIT, eagain := p.fresh(), 0)
    p.jump(JEQ, FUTEX_WAIT_BITSET, eagain, 0)
    p.ret(EPERM_RET)
    p.label(eagain)
    p.ret(EAGAIN_RET)
    p.label(allow)
    p.ret(ALLOW)
    p.label(after)


@functools.lru_cache(maxsize=4)
def child_rules(own_pid: int) -> bytes:
    """The process rules alone, for a check child to stack on the supervisor's filter. Small on purpose:
    the kernel emulates a new filter for every syscall number when it is loaded (its action cache), so
    a child loading the whole unit filter again paid ~1 ms more per check."""
    p = Program()
    p.load(NR)
    _process_rules(p, own_pid)
    p.label("allow")
    p.ret(ALLOW)
    p.label("eperm")
    p.ret(EPERM_RET)
    return p.pack()


PID_SENTINEL = 0x7FFFFFF0  # above any pid_max: marks the instructions that compare with our own pid


class SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


class ChildRules:
    """`child_rules` for a check child, prepared by the batch supervisor before it forks (assembling a
    program and setting up ctypes is slow Python): the child only writes its pid into its copy of the
    buffer and loads it. no_new_privs is inherited from the supervisor."""

    def __init__(self) -> None:
        code = child_rules(PID_SENTINEL)
        sentinel = PID_SENTINEL.to_bytes(4, "little")
        self.offsets = tuple(off + 4 for off in range(0, len(code), 8) if code[off + 4:off + 8] == sentinel)
        self.buf = ctypes.create_string_buffer(code, len(code))
        self.fprog = SockFprog(len(code) // 8, ctypes.cast(self.buf, ctypes.c_void_p))
        self.libc = ctypes.CDLL(None, use_errno=True)

    def program_for(self, own_pid: int) -> bytes:
        out = bytearray(self.buf.raw)
        for off in self.offsets:
            out[off:off + 4] = own_pid.to_bytes(4, "little")
        return bytes(out)

    def load(self, own_pid: int) -> str | None:
        """Stack the rules for `own_pid` on this process's filters; None on success, else why not."""
        pid = own_pid.to_bytes(4, "little")
        for off in self.offsets:
            self.buf[off:off + 4] = pid
        if self.libc.prctl(22, 2, ctypes.byref(self.fprog), 0, 0) != 0:  # PR_SET_SECCOMP, SECCOMP_MODE_FILTER
            return f"PR_SET_SECCOMP failed: errno {ctypes.get_errno()}"
        return None


class PreparedFilter:
    """A filter program with its ctypes plumbing built in advance (by the zygote, before it forks): in a
    freshly forked unit, `ctypes.CDLL(None)` and building the buffers cost about a third of a
    millisecond of page faults and Python; loading a prepared one is two prctl calls."""

    def __init__(self, code: bytes) -> None:
        self.buf = ctypes.create_string_buffer(code, len(code))
        self.fprog = SockFprog(len(code) // 8, ctypes.cast(self.buf, ctypes.c_void_p))
        self.libc = ctypes.CDLL(None, use_errno=True)

    def load(self) -> str | None:
        """no_new_privs, then the filter; None on success, else why it failed."""
        if self.libc.prctl(38, 1, 0, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS
            return f"PR_SET_NO_NEW_PRIVS failed: errno {ctypes.get_errno()}"
        if self.libc.prctl(22, 2, ctypes.byref(self.fprog), 0, 0) != 0:  # PR_SET_SECCOMP, SECCOMP_MODE_FILTER
            return f"PR_SET_SECCOMP failed: errno {ctypes.get_errno()}"
        return None


@functools.lru_cache(maxsize=8)
def prepared_filter(own_pid: int, supervisor: bool = False) -> PreparedFilter:
    """The unit filter (or the supervisor's) for `own_pid`, prepared; cached, so the zygote builds it once
    and every unit inherits it."""
    return PreparedFilter(seccomp_program(own_pid, supervisor))


SYSINFO_SYSCONF = ("SC_PHYS_PAGES", "SC_AVPHYS_PAGES")


def refuse_sysinfo_sysconf() -> None:
    """Make `os.sysconf` raise for the names glibc answers with `sysinfo(2)`, which the filter refuses.

    glibc 2.36 ignores sysinfo's failure and returns whatever was on its stack (a unit saw 9.7e12 pages),
    so env code sizing a cache by RAM would get a random number instead of an error. Called by the zygote
    before it forks, so every unit inherits it; `ctypes` calls to libc still get glibc's own answer."""
    real = os.sysconf
    refused = {os.sysconf_names[n] for n in SYSINFO_SYSCONF if n in os.sysconf_names}

    def sysconf(name: "int | str") -> int:
        if (os.sysconf_names.get(name) if isinstance(name, str) else name) in refused:
            raise PermissionError(errno.EPERM, "sysinfo(2) is refused in the sandbox (a host-wide counter)")
        return real(name)

    sysconf.__doc__ = real.__doc__
    os.sysconf = sysconf


@functools.lru_cache(maxsize=1)
def prepared_child_rules() -> ChildRules:
    """`ChildRules` built once (by the zygote, before it forks), for processes that stack the process rules
    for their own pid on the supervisor variant: a pair unit's member and spare (worker.py)."""
    return ChildRules()


def install_seccomp(supervisor: bool = False, program: bytes | None = None) -> str | None:
    """Load the filter into this process (the unit filter for our pid, the supervisor's, or `program`);
    returns None on success, else why it is unavailable. A second call stacks a second filter."""
    if os.uname().machine != "x86_64":
        return f"seccomp filter is written for x86_64, not {os.uname().machine}"
    try:
        prepared = PreparedFilter(program) if program is not None else prepared_filter(os.getpid(), supervisor)
    except OSError as exc:
        return f"libc not loadable: {exc}"
    return prepared.load()


def probe_seccomp() -> str | None:
    """Fork a throw-away child that loads the filter and must then be refused a socket."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        why = install_seccomp()
        if why is None:
            try:
                socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                why = "socket() still allowed after loading the filter"
            except PermissionError:
                why = ""
        os.write(w, why.encode()[:500])
        os._exit(0)
    os.close(w)
    answer = b""
    while chunk := os.read(r, 1000):
        answer += chunk
    os.close(r)
    os.waitpid(pid, 0)
    return answer.decode() or None
