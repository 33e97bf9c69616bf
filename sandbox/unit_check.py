"""The host verifies every unit from outside before it sends the unit any code: the zygote is not trusted.

A unit's member reports "ready" on its setup socket after it has hardened itself; the kernel stamps that
message with the member's host pid. The host then reads `/proc/<pid>/status`, `/proc/<pid>/limits` and
`/proc/<pid>/ns/*` (it is root or the same uid, so it can) and refuses the unit unless: seccomp is on
(mode 2, no_new_privs) when the pool uses it, no capability is left, the uid is the zygote's, one
thread runs, the rlimits are the configured ones, it is a child of this zygote and, with namespaces,
it sits one pid-namespace level below the zygote with user/pid/IPC/mount namespaces of its own. A zygote whose memory was tampered with (seccomp flag off, limits changed)
therefore cannot hand out a weak unit: the spawn fails and the pool replaces the zygote.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any

NAMESPACES = ("pid", "ipc", "mnt", "user")
ZERO_CAPS = "0000000000000000"
_LIMIT_LINE = re.compile(r"^(Max [a-z ]+?)\s{2,}(\S+)\s+(\S+)")


@dataclass(frozen=True)
class ProcIdentity:
    """What the host knows about a zygote process, read once after its hello."""

    host_pid: int
    uid: str
    nspid_depth: int
    namespaces: dict[str, str]


def read_status(host_pid: int) -> dict[str, str]:
    with open(f"/proc/{host_pid}/status", encoding="utf-8", errors="replace") as fh:
        return {k: v.strip() for k, _, v in (line.partition(":") for line in fh)}


def read_limits(host_pid: int) -> dict[str, tuple[str, str]]:
    """'Max address space' -> (soft, hard) as printed by the kernel ('unlimited' or a number)."""
    out = {}
    with open(f"/proc/{host_pid}/limits", encoding="utf-8") as fh:
        for line in fh:
            m = _LIMIT_LINE.match(line)
            if m:
                out[m.group(1)] = (m.group(2), m.group(3))
    return out


def namespaces(host_pid: int) -> dict[str, str]:
    """Namespace ids; {} when we may not read them (a non-root host and a zygote exec'd in our own user
    namespace: then the pid-namespace depth and the parent chain still prove the unit is separate)."""
    try:
        return {name: os.readlink(f"/proc/{host_pid}/ns/{name}") for name in NAMESPACES}
    except PermissionError:
        return {}


def identity(host_pid: int) -> ProcIdentity:
    status = read_status(host_pid)
    return ProcIdentity(host_pid, status.get("Uid", ""), len(status.get("NSpid", "").split()), namespaces(host_pid))


def expected_limits(limits: dict[str, Any]) -> dict[str, tuple[str | None, str]]:
    """(soft or None = any, hard) per /proc limits line; the CPU soft limit moves with each call's window."""
    mib = 1 << 20
    return {
        "Max address space": (str(limits["memory_mb"] * mib),) * 2,
        "Max file size": (str(limits["fsize_mb"] * mib),) * 2,
        "Max open files": (str(limits["nofile"]),) * 2,
        "Max processes": (str(limits["nproc"]),) * 2,
        "Max pending signals": (str(limits["sigpending"]),) * 2,
        "Max core file size": ("0", "0"),
        "Max cpu time": (None, str(limits["cpu_budget_s"])),
    }


def unit_problem(host_pid: int, zygote: ProcIdentity, limits: dict[str, Any], isolated: bool,
                 seccomp: bool, parent_pid: int | None = None) -> str | None:
    """None when the unit's member is what the pool asked for, else the first thing that is wrong.
    `parent_pid`: a pair unit's spare, whose parent is the unit's first member (host pid), not the zygote."""
    try:
        status = read_status(host_pid)
        found = read_limits(host_pid)
        ns = namespaces(host_pid) if isolated else {}
    except (OSError, ValueError) as exc:
        return f"cannot inspect the unit process {host_pid}: {exc}"
    if seccomp and (status.get("Seccomp") != "2" or status.get("NoNewPrivs") != "1"):
        return f"seccomp is not on (Seccomp {status.get('Seccomp')}, NoNewPrivs {status.get('NoNewPrivs')})"
    caps = ("CapEff", "CapPrm", "CapAmb") + (("CapBnd",) if isolated else ())
    left = [c for c in caps if status.get(c) != ZERO_CAPS]
    if left:
        return "capabilities left: " + ", ".join(f"{c} {status.get(c)}" for c in left)
    if status.get("Uid") != zygote.uid:
        return f"runs as uid {status.get('Uid')}, not the zygote's {zygote.uid}"
    if status.get("Threads") != "1":
        return f"{status.get('Threads')} threads before any code ran"
    depth = len(status.get("NSpid", "").split())
    if depth != zygote.nspid_depth + (1 if isolated else 0):
        return f"pid namespace depth {depth}, expected {zygote.nspid_depth + (1 if isolated else 0)}"
    parent = zygote.host_pid if parent_pid is None else parent_pid
    if status.get("PPid") != str(parent):
        return f"not a unit of this zygote (its parent is {status.get('PPid')}, expected {parent})"
    shared = [name for name in NAMESPACES if ns and ns.get(name) == zygote.namespaces.get(name)] if isolated else []
    if shared:
        return "shares the zygote's " + "/".join(shared) + " namespace"
    for name, (soft, hard) in expected_limits(limits).items():
        got = found.get(name)
        if got is None or got[1] != hard or (soft is not None and got[0] != soft):
            return f"{name} is {got}, expected ({soft or 'any'}, {hard})"
    return None
