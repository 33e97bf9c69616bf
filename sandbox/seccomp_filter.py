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
namespaces, mounts, kernel objects and identity changes. `clone` is allowed only for threads,
`clone3` answers ENOSYS so that glibc falls back to `clone`, and the x32 ABI is refused wholesale.
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
# Syscalls whose first argument is a pid: allowed only for 0 (= the caller) or the caller's own pid.
PID_FIRST = {"prlimit64": 302, "sched_setaffinity": 203, "sched_setparam": 142, "sched_setscheduler": 144,
             "sched_setattr": 314, "get_robust_list": 274}
# F_SETOWN, F_SETSIG, F_SETOWN_EX, F_SETLEASE, F_NOTIFY, F_SETPIPE_SZ (pipe buffers are charged per uid,
# i.e. to every unit of every jail at once)
BAD_FCNTL = (8, 10, 15, 1024, 1026, 1031)
BAD_IOCTL = (0x8901, 0x8902, 0x5412, 0x540E, 0x5410, 0x541C)  # FIOSETOWN SIOCSPGRP TIOCSTI TIOCSCTTY TIOCSPGRP TIOCLINUX
BAD_PRCTL = (4, 35, 0x59616D61)  # PR_SET_DUMPABLE, PR_SET_MM, PR_SET_PTRACER

LD_W_ABS, JEQ, JSET, RET = 0x20, 0x15, 0x45, 0x06
JGE = 0x35
ALLOW, KILL_PROCESS = 0x7FFF0000, 0x80000000
EPERM_RET, ENOSYS_RET = 0x00050000 | errno.EPERM, 0x00050000 | errno.ENOSYS
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


@functools.lru_cache(maxsize=4)
def seccomp_program(own_pid: int) -> bytes:
    """The filter for a process whose pid (in its own namespace) is `own_pid`. Cached: a unit's member is
    always pid 2, so the zygote builds it once and every fork inherits it."""
    p = Program()
    p.load(ARCH)
    p.jump(JEQ, AUDIT_ARCH_X86_64, next_ := p.fresh(), 0)
    p.ret(KILL_PROCESS)
    p.label(next_)
    p.load(NR)
    # Plain denials return right after their test: BPF conditional jumps reach 255 instructions at most.
    for op, nr, value in [(JGE, X32_BIT, EPERM_RET), (JEQ, NR_CLONE3, ENOSYS_RET)] + [
            (JEQ, nr, EPERM_RET) for nr in sorted(DENY.values())]:
        p.jump(op, nr, 0, next_ := p.fresh())
        p.ret(value)
        p.label(next_)
    # Every rule below returns once its syscall matched, so the accumulator still holds nr for the next.
    p.jump(JEQ, NR_CLONE, 0, after := p.fresh())
    p.load(arg_low(0))
    p.jump(JSET, CLONE_THREAD, 0, "eperm")
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
    for nr, arg, bad in ((NR_FCNTL, 1, BAD_FCNTL), (NR_IOCTL, 1, BAD_IOCTL), (NR_PRCTL, 0, BAD_PRCTL)):
        p.jump(JEQ, nr, 0, after := p.fresh())
        _one_of(p, arg_low(arg), bad, "eperm", "allow")
        p.label(after)
    p.label("allow")
    p.ret(ALLOW)
    p.label("eperm")
    p.ret(EPERM_RET)
    return p.pack()


def install_seccomp() -> str | None:
    """Load the filter into this process; returns None on success, else why it is unavailable."""
    if os.uname().machine != "x86_64":
        return f"seccomp filter is written for x86_64, not {os.uname().machine}"
    try:
        libc = ctypes.CDLL(None, use_errno=True)
    except OSError as exc:
        return f"libc not loadable: {exc}"
    code = seccomp_program(os.getpid())
    buf = ctypes.create_string_buffer(code, len(code))

    class SockFprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    fprog = SockFprog(len(code) // 8, ctypes.cast(buf, ctypes.c_void_p))
    if libc.prctl(38, 1, 0, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS
        return f"PR_SET_NO_NEW_PRIVS failed: errno {ctypes.get_errno()}"
    if libc.prctl(22, 2, ctypes.byref(fprog), 0, 0) != 0:  # PR_SET_SECCOMP, SECCOMP_MODE_FILTER
        return f"PR_SET_SECCOMP failed: errno {ctypes.get_errno()}"
    return None


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
