"""The sandbox's seccomp filter: a hand-built classic-BPF denylist, loaded by each episode child.

Runs inside the jail next to worker.py (standard library only). x86_64 only; elsewhere
`install_seccomp` says why it is unavailable and the pool reports seccomp as OFF.
"""

from __future__ import annotations

import ctypes
import errno
import os
import socket
import struct

AUDIT_ARCH_X86_64 = 0xC000003E
RET_ALLOW = 0x7FFF0000
RET_KILL_PROCESS = 0x80000000
LD_ABS_W = 0x20
JEQ_K = 0x15
JGE_K = 0x35
JSET_K = 0x45
RET_K = 0x06
CLONE_THREAD = 0x00010000
X32_BIT = 0x40000000

# Syscalls a tool method never needs: sockets, new processes/programs, debugging and signalling other
# processes, namespace/mount/kernel-object manipulation, identity changes.
DENY_EPERM = {
    "socket": 41, "connect": 42, "accept": 43, "bind": 49, "listen": 50, "socketpair": 53,
    "accept4": 288, "fork": 57, "vfork": 58, "execve": 59, "execveat": 322,
    "ptrace": 101, "process_vm_readv": 310, "process_vm_writev": 311, "kcmp": 312,
    "tkill": 200, "rt_sigqueueinfo": 129, "rt_tgsigqueueinfo": 297,
    "pidfd_open": 434, "pidfd_send_signal": 424, "pidfd_getfd": 438, "process_madvise": 440,
    "mount": 165, "umount2": 166, "pivot_root": 155, "chroot": 161, "unshare": 272, "setns": 308,
    "bpf": 321, "keyctl": 250, "add_key": 248, "request_key": 249, "perf_event_open": 298,
    "userfaultfd": 323, "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
    "personality": 135, "reboot": 169, "kexec_load": 246, "kexec_file_load": 320,
    "init_module": 175, "finit_module": 313, "delete_module": 176, "swapon": 167, "swapoff": 168,
    "acct": 163, "syslog": 103, "iopl": 172, "ioperm": 173, "modify_ldt": 154, "quotactl": 179,
    "setuid": 105, "setgid": 106, "setreuid": 113, "setregid": 114, "setresuid": 117,
    "setresgid": 119, "setgroups": 116, "setfsuid": 122, "setfsgid": 123,
    "mknod": 133, "mknodat": 259, "name_to_handle_at": 303, "open_by_handle_at": 304,
    "fsopen": 430, "fsmount": 432, "move_mount": 429, "open_tree": 428, "mount_setattr": 442,
}
NR_CLONE, NR_CLONE3 = 56, 435
NR_KILL, NR_TGKILL = 62, 234


def _ins(code: int, jt: int, jf: int, k: int) -> bytes:
    return struct.pack("HBBI", code, jt, jf, k)


def seccomp_program(own_pid: int) -> bytes:
    """Default ALLOW; EPERM for the denylist; clone only for threads; kill/tgkill only to ourselves."""
    eperm = 0x00050000 | errno.EPERM
    enosys = 0x00050000 | errno.ENOSYS
    prog = [
        _ins(LD_ABS_W, 0, 0, 4),                      # arch
        _ins(JEQ_K, 1, 0, AUDIT_ARCH_X86_64),
        _ins(RET_K, 0, 0, RET_KILL_PROCESS),
        _ins(LD_ABS_W, 0, 0, 0),                      # syscall nr
        _ins(JGE_K, 0, 1, X32_BIT),                   # x32 ABI: refuse wholesale
        _ins(RET_K, 0, 0, eperm),
    ]
    for nr in sorted(DENY_EPERM.values()):
        prog += [_ins(JEQ_K, 0, 1, nr), _ins(RET_K, 0, 0, eperm)]
    # clone3 hides its flags in memory BPF cannot read: ENOSYS makes glibc fall back to clone().
    prog += [_ins(JEQ_K, 0, 1, NR_CLONE3), _ins(RET_K, 0, 0, enosys)]
    prog += [
        _ins(JEQ_K, 0, 4, NR_CLONE),
        _ins(LD_ABS_W, 0, 0, 16),                     # args[0] low word = clone flags
        _ins(JSET_K, 0, 1, CLONE_THREAD),
        _ins(RET_K, 0, 0, RET_ALLOW),
        _ins(RET_K, 0, 0, eperm),
        _ins(LD_ABS_W, 0, 0, 0),                      # reload nr after the clone block
    ]
    for nr in (NR_KILL, NR_TGKILL):
        prog += [
            _ins(JEQ_K, 0, 6, nr),
            _ins(LD_ABS_W, 0, 0, 16),                 # pid / tgid, low word
            _ins(JEQ_K, 0, 3, own_pid),
            _ins(LD_ABS_W, 0, 0, 20),                 # high word must be 0 (no negative pids)
            _ins(JEQ_K, 0, 1, 0),
            _ins(RET_K, 0, 0, RET_ALLOW),
            _ins(RET_K, 0, 0, eperm),
        ]
        prog.append(_ins(LD_ABS_W, 0, 0, 0))
    prog.append(_ins(RET_K, 0, 0, RET_ALLOW))
    return b"".join(prog)


def install_seccomp() -> str | None:
    """Load the filter into this process; returns None on success, else why it is unavailable."""
    if os.uname().machine != "x86_64":
        return f"seccomp filter is written for x86_64, not {os.uname().machine}"
    try:
        libc = ctypes.CDLL(None, use_errno=True)
    except OSError as exc:
        return f"libc not loadable: {exc}"
    code = seccomp_program(os.getpid())
    n = len(code) // 8
    buf = ctypes.create_string_buffer(code, len(code))

    class SockFprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    fprog = SockFprog(n, ctypes.cast(buf, ctypes.c_void_p))
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
