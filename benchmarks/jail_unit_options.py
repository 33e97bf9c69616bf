"""Runs inside a real jail (bench_sandbox starts it with the sandbox's own bwrap command): how much does each
way of giving a unit fresh namespaces cost, compared with today's plain fork? Standard library only,
next to a copy of sandbox/jail_unit.py. Prints one JSON object: option -> [p50 ms, p90 ms].

Each sample creates a unit whose member does nothing, then waits until it is gone (creation and teardown
both cost CPU on the machine; the pool hides creation latency by making the next unit in advance).
"""

import ctypes
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import jail_unit  # noqa: E402

ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)
libc = ctypes.CDLL(None, use_errno=True)
# what a zygote has imported, so that forks copy a realistic address space
import collections, copy, dataclasses, datetime, decimal, enum, functools, inspect, itertools, math  # noqa: E401,E402,F401
import random, re, socket, string, struct, traceback, typing, uuid  # noqa: E401,E402,F401


def plain_fork() -> None:
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)


def fork_unshare_member_as_init() -> None:
    pid = os.fork()
    if pid == 0:
        libc.unshare(jail_unit.UNIT_NAMESPACES)
        member = os.fork()
        if member == 0:
            jail_unit.mount_private_proc()
            os._exit(0)
        os.waitpid(member, 0)
        os._exit(0)
    os.waitpid(pid, 0)


def fork_unshare_init_then_member() -> None:
    pid = os.fork()
    if pid == 0:
        libc.unshare(jail_unit.UNIT_NAMESPACES)
        init = os.fork()
        if init == 0:
            jail_unit.mount_private_proc()
            member = os.fork()
            if member == 0:
                os._exit(0)
            os.waitpid(member, 0)
            os._exit(0)
        os.waitpid(init, 0)
        os._exit(0)
    os.waitpid(pid, 0)


def clone_member_as_init() -> None:
    pid = jail_unit.clone_unit()
    if pid == 0:
        jail_unit.mount_private_proc()
        os._exit(0)
    os.waitpid(pid, 0)


def clone_init_then_member() -> None:
    pid = jail_unit.clone_unit()
    if pid == 0:
        jail_unit.mount_private_proc()
        member = os.fork()
        if member == 0:
            os._exit(0)
        os.waitpid(member, 0)
        os._exit(0)
    os.waitpid(pid, 0)


OPTIONS = {
    "fork (pre-issue-10: shared namespaces)": plain_fork,
    "fork + unshare + fork member as pid-ns init": fork_unshare_member_as_init,
    "fork + unshare + fork init + fork member": fork_unshare_init_then_member,
    "clone(NEWUSER|NEWPID|NEWIPC|NEWNS) init + fork member": clone_init_then_member,
    "clone(NEWUSER|NEWPID|NEWIPC|NEWNS) member as pid-ns init (chosen)": clone_member_as_init,
}


def main(samples: int) -> None:
    """`samples` 0: only start (the cost of a fresh jail per episode is measured from outside)."""
    if samples == 0:
        return
    results = {}
    for name, make in OPTIONS.items():
        times = []
        for _ in range(samples):
            t0 = time.perf_counter()
            make()
            times.append((time.perf_counter() - t0) * 1000)
        times.sort()
        results[name] = [round(times[len(times) // 2], 3), round(times[int(len(times) * 0.9)], 3)]
    print(json.dumps(results))


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 60)
