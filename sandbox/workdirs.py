"""Each pool's directory of jail files names its owner, so that the next pool can remove what a killed one left.

A pool removes its directory when it closes, is collected, or its interpreter exits. A process killed
with SIGKILL cannot, and each left a 2.5 MB copy (the BFCL package included) in the temp directory: 85
of them after one day of test runs here (the resume-after-kill spec alone kills five factories). Beside
each directory `<dir>.owner` records the creating process (pid and start time, so a reused pid is not
taken for it); it sits outside the directory because the jail sees the directory and has no business
knowing host pids. Opening a pool removes every directory whose owner is gone; a directory without an
owner file (an older pool, or one still being made), or whose owner lives in another pid namespace (a
container sharing the temp directory, where its pid means nothing here), is left alone.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

PREFIX = "envscaler-sandbox-"
OWNER_SUFFIX = ".owner"


def process_start(pid: int) -> str | None:
    """The kernel's start time of `pid` (clock ticks since boot), or None when it does not exist."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return fields[19] if len(fields) > 19 else None


def _pid_namespace() -> str:
    try:
        return os.readlink("/proc/self/ns/pid")
    except OSError:
        return "unknown"


def claim(workdir: str) -> None:
    """Record this process as the owner of `workdir`."""
    owner = Path(workdir + OWNER_SUFFIX)
    owner.write_text(f"{os.getpid()} {process_start(os.getpid())} {_pid_namespace()}\n")


def release(workdir: str) -> None:
    shutil.rmtree(workdir, ignore_errors=True)
    Path(workdir + OWNER_SUFFIX).unlink(missing_ok=True)


def sweep_stale(root: str | None = None) -> list[str]:
    """Remove the pool directories under `root` (default: the temp directory) whose owner is gone."""
    removed, here = [], _pid_namespace()
    for owner in Path(root or tempfile.gettempdir()).glob(f"{PREFIX}*{OWNER_SUFFIX}"):
        try:
            pid, start, namespace = owner.read_text().split()
            if namespace != here or here == "unknown":
                continue  # its pid names another process here, or we cannot tell
            alive = process_start(int(pid)) == start
        except (OSError, ValueError):
            continue  # half written, or not ours to judge
        if not alive:
            workdir = str(owner)[: -len(OWNER_SUFFIX)]
            release(workdir)
            removed.append(workdir)
    return removed
