"""Check batches (sandbox/jail_batch.py): one unit per batch, a trusted supervisor as its pid 1, one forked
child per check. Every attack here runs as a check of a batch whose other checks are the bystander's
(CHECKS on LIBRARY_STATE): their outcomes must come back exactly as without the attacker, and the host
invariants of the `guard` fixture (zygotes untouched, no process left, a bystander episode and its
checks unharmed, a benign call works) must hold afterwards."""

from __future__ import annotations

import json
import os
import signal
import threading
import time

from envscaler_core.runtime import CheckOutcome
from sandbox import SandboxPool
from sandbox.checks import MAX_CHECKS_PER_UNIT
from tests.sandbox.helpers import CHECKS, EXPECTED_CHECKS, LIBRARY_STATE, children_of

PRELUDE = "import os, sys, json, time, errno, ctypes, signal, threading, builtins\nlibc = ctypes.CDLL(None, use_errno=True)\n"


def reporting_check(body: str) -> str:
    """A check whose body fills `found` (a dict) and reports it as its error text (checks return only
    bools)."""
    lines = "\n".join("    " + line for line in body.strip("\n").splitlines())
    return (PRELUDE + "def check_func(final_state):\n    found = {}\n" + lines
            + "\n    raise RuntimeError('FOUND' + json.dumps(found, sort_keys=True))\n")


def found(outcome: CheckOutcome) -> dict:
    assert outcome.passed is None and outcome.error and "FOUND" in outcome.error, outcome
    return json.loads(outcome.error.rsplit("FOUND", 1)[1].strip())


def bystanders_after(pool: SandboxPool, attacker: str, timeout_s: float | None = None) -> list[CheckOutcome]:
    """Run the attacker first and the bystander's checks after it, in one batch (one unit)."""
    out = pool.run_checks([attacker, *CHECKS], LIBRARY_STATE, LIBRARY_STATE, timeout_s=timeout_s)
    assert [o.passed for o in out[1:]] == EXPECTED_CHECKS, [o.error for o in out[1:]]
    return out


def test_a_check_that_subverts_its_own_process_changes_only_its_own_outcome(jail: SandboxPool, guard) -> None:
    cheat = PRELUDE + (
        "def check_func(final_state):\n"
        "    fake = json.dumps({'passed': True, 'error': None}).encode()\n"
        "    builtins.type = lambda *a: bool\n"
        "    json.dumps = json.loads = lambda *a, **k: fake.decode()\n"
        "    os._exit = lambda *a: None\n"
        "    for name, module in list(sys.modules.items()):\n"
        "        for attr in ('write_frame', 'run_check', 'dumps', 'read_reply', 'run_one', 'loads'):\n"
        "            if hasattr(module, attr):\n"
        "                try:\n"
        "                    setattr(module, attr, lambda *a, **k: fake.decode())\n"
        "                except (AttributeError, TypeError):\n"
        "                    pass\n"
        "    for fd in range(0, 1024):\n"
        "        try:\n"
        "            os.write(fd, (len(fake).to_bytes(4, 'big') + fake) * 16)\n"
        "        except OSError:\n"
        "            pass\n"
        "    return True\n")
    assert bystanders_after(jail, cheat)[0].passed is True  # its own outcome is its own business


def test_a_check_cannot_read_write_or_trace_the_supervisor(jail: SandboxPool, guard) -> None:
    out = bystanders_after(jail, reporting_check("""
for name, mode in (('mem', 'r+b'), ('fd', None), ('environ', 'rb'), ('status', 'rb'), ('maps', 'rb')):
    try:
        os.listdir('/proc/1/fd') if mode is None else open('/proc/1/' + name, mode).close()
        found['/proc/1/' + name] = 'opened'
    except OSError as exc:
        found['/proc/1/' + name] = type(exc).__name__
buf = ctypes.create_string_buffer(64)
iov = (ctypes.c_void_p * 2)(ctypes.addressof(buf), 64)
for label, args in (('ptrace attach', (101, 16, 1, 0, 0)), ('ptrace seize', (101, 0x4206, 1, 0, 0)),
                    ('process_vm_writev', (311, 1, iov, 1, iov, 1, 0)), ('process_vm_readv', (310, 1, iov, 1, iov, 1, 0)),
                    ('pidfd_open', (434, 1, 0)), ('prlimit', (302, 1, 9, 0, 0)), ('kcmp', (312, 1, os.getpid(), 0, 0, 0))):
    ctypes.set_errno(0)
    ret = libc.syscall(*args)
    found[label] = errno.errorcode.get(ctypes.get_errno()) if ret == -1 else ret
found['visible'] = sorted(p for p in os.listdir('/proc') if p.isdigit())
found['me'] = os.getpid()
"""))
    seen = found(out[0])
    assert seen["visible"] == [str(seen["me"])] and seen["me"] != 1, seen
    assert all(v != "opened" for k, v in seen.items() if k.startswith("/proc/1/")), seen
    assert all(seen[k] == "EPERM" for k in ("ptrace attach", "ptrace seize", "process_vm_writev", "process_vm_readv",
                                            "pidfd_open", "prlimit", "kcmp")), seen


def test_a_check_cannot_signal_or_wake_its_waiting_siblings_or_the_supervisor(jail: SandboxPool, guard) -> None:
    out = bystanders_after(jail, reporting_check("""
me = os.getpid()
for pid in range(1, 64):
    if pid == me:
        continue
    for sig in (signal.SIGKILL, signal.SIGCONT, signal.SIGSTOP):
        for label, args in (('kill', (62, pid, sig)), ('tgkill', (234, pid, pid, sig)), ('tkill', (200, pid, sig)),
                            ('rt_sigqueueinfo', (129, pid, sig, 0))):
            ctypes.set_errno(0)
            if libc.syscall(*args) != -1 or ctypes.get_errno() != errno.EPERM:
                found[f'{label} {pid} {sig}'] = errno.errorcode.get(ctypes.get_errno(), 'delivered')
for label, args in (('kill process group', (62, 0, 9)), ('kill all', (62, -1, 9))):
    ctypes.set_errno(0)
    if libc.syscall(*args) != -1:
        found[label] = 'delivered'
ctypes.set_errno(0)
found['fcntl F_SETOWN'] = libc.syscall(72, 1, 8, 1)
found['fcntl F_SETOWN errno'] = errno.errorcode.get(ctypes.get_errno())
found['self'] = libc.syscall(62, me, 0)
"""))
    seen = found(out[0])
    assert seen == {"fcntl F_SETOWN": -1, "fcntl F_SETOWN errno": "EPERM", "self": 0}, seen


def test_a_check_carries_the_unit_filter_and_cannot_fork(jail: SandboxPool, guard) -> None:
    out = bystanders_after(jail, reporting_check("""
status = dict(line.split(':', 1) for line in open('/proc/self/status').read().splitlines() if ':' in line)
for key in ('Seccomp', 'Seccomp_filters', 'NoNewPrivs', 'CapEff', 'CapPrm', 'CapBnd', 'Threads'):
    found[key] = status[key].strip()
try:
    os.fork()
    found['fork'] = 'forked'
except OSError as exc:
    found['fork'] = type(exc).__name__
for label, args in (('clone plain', (56, 17, 0, 0, 0, 0)), ('clone new pid ns', (56, 0x20000000 | 17, 0, 0, 0, 0)),
                    ('unshare', (272, 0x10000000)), ('execve', (59, b'/bin/sh', 0, 0)), ('socket', (41, 1, 1, 0)),
                    ('prctl dumpable', (157, 4, 1, 0, 0, 0)), ('memfd_create', (319, b'x', 0))):
    ctypes.set_errno(0)
    ret = libc.syscall(*args)
    found[label] = errno.errorcode.get(ctypes.get_errno()) if ret == -1 else ret
t = threading.Thread(target=lambda: None)
t.start()
t.join()
found['thread'] = 'ran'
"""))
    seen = found(out[0])
    assert seen == {"Seccomp": "2", "Seccomp_filters": "2", "NoNewPrivs": "1", "CapEff": "0000000000000000",
                    "CapPrm": "0000000000000000", "CapBnd": "0000000000000000", "Threads": "1",
                    "fork": "PermissionError", "clone plain": "EPERM", "clone new pid ns": "EPERM", "unshare": "EPERM",
                    "execve": "EPERM", "socket": "EPERM", "prctl dumpable": "EPERM", "memfd_create": "EPERM",
                    "thread": "ran"}, seen


def test_a_check_never_holds_an_earlier_checks_result_in_its_memory(jail: SandboxPool, guard) -> None:
    """Children are forked before any check runs: the second check scans its whole writable memory for
    the first one's secret (sent back to the supervisor and the host as its error) and finds only what
    it was given itself (a token of the states)."""
    token = "ZR" + os.urandom(16).hex()
    leaker = "import secrets\ndef check_func(final_state):\n    raise ValueError('ZQ' + secrets.token_hex(16))\n"
    scanner = (
        "import ctypes, re\n"
        "def check_func(final_state):\n"
        "    theirs, mine = re.compile(rb'ZQ[0-9a-f]{32}'), re.compile(rb'ZR[0-9a-f]{32}')\n"
        "    saw_mine = False\n"
        "    for line in open('/proc/self/maps').read().splitlines():\n"
        "        parts = line.split()\n"
        "        if not parts[1].startswith('rw') or (len(parts) > 5 and parts[5] not in ('[heap]', '[stack]')):\n"
        "            continue\n"
        "        lo, hi = (int(x, 16) for x in parts[0].split('-'))\n"
        "        data = ctypes.string_at(lo, hi - lo)\n"
        "        if theirs.search(data):\n"
        "            return False\n"
        "        saw_mine = saw_mine or bool(mine.search(data))\n"
        "    return saw_mine\n")
    out = jail.run_checks([leaker, scanner], {"token": token}, {"token": token})
    assert out[0].passed is None and "ValueError: ZQ" in out[0].error
    assert out[1].passed is True, out[1].error


def test_a_check_that_sleeps_forever_times_out_alone(jail: SandboxPool, guard) -> None:
    sleeper = "import time\ndef check_func(final_state):\n    time.sleep(3600)\n"
    out = bystanders_after(jail, sleeper, timeout_s=0.5)
    assert out[0].passed is None and out[0].error.startswith("timeout")


def test_a_check_that_leaves_threads_behind_costs_the_next_check_nothing(jail: SandboxPool, guard) -> None:
    bomb = PRELUDE + (
        "def check_func(final_state):\n"
        "    try:\n"
        "        while True:\n"
        "            threading.Thread(target=time.sleep, args=(3600,), daemon=True).start()\n"
        "    except RuntimeError:\n"
        "        return True\n")
    thread_user = PRELUDE + (
        "def check_func(final_state):\n"
        "    threads = [threading.Thread(target=time.sleep, args=(0.01,)) for _ in range(3)]\n"
        "    for t in threads:\n"
        "        t.start()\n"
        "    for t in threads:\n"
        "        t.join()\n"
        "    return True\n")
    out = jail.run_checks([thread_user, bomb, thread_user, *CHECKS], LIBRARY_STATE, LIBRARY_STATE, timeout_s=30)
    assert [o.passed for o in out] == [True, True, True, *EXPECTED_CHECKS], [o.error for o in out]


def test_a_check_that_exhausts_its_memory_fails_alone(jail: SandboxPool, guard) -> None:
    hog = ("def check_func(final_state):\n"
           "    held = []\n"
           "    while True:\n"
           "        held.append(bytearray(16 << 20))\n")
    out = bystanders_after(jail, hog, timeout_s=30)
    assert out[0].passed is None and ("MemoryError" in out[0].error or "memory cap" in out[0].error), out[0].error


def test_a_check_dies_from_its_own_signals_like_any_process(jail: SandboxPool, guard) -> None:
    """A check child is not its namespace's init: os.abort() is SIGABRT, a signal to itself kills it."""
    aborts = "import os\ndef check_func(final_state):\n    os.abort()\n"
    terminates = "import os, signal\ndef check_func(final_state):\n    os.kill(os.getpid(), signal.SIGTERM)\n"
    out = jail.run_checks([aborts, terminates, *CHECKS], LIBRARY_STATE, LIBRARY_STATE)
    assert out[0].error == "crash: the check process died from SIGABRT"
    assert out[1].error == "crash: the check process died from SIGTERM"
    assert [o.passed for o in out[2:]] == EXPECTED_CHECKS


def test_a_check_over_its_cpu_window_dies_from_sigxcpu(jail: SandboxPool, guard) -> None:
    burner = ("import resource\n"
              "def check_func(final_state):\n"
              "    resource.setrlimit(resource.RLIMIT_CPU, (1, resource.getrlimit(resource.RLIMIT_CPU)[1]))\n"
              "    while True:\n"
              "        pass\n")
    out = bystanders_after(jail, burner, timeout_s=120)
    assert out[0].error == "timeout: the check exceeded its CPU-time limit (SIGXCPU); the process was killed"


def test_half_frames_floods_and_oversized_frames_fail_alone(jail: SandboxPool, guard) -> None:
    def writer(body: str) -> str:
        return ("import os, time\n"
                "def check_func(final_state):\n"
                "    fd = max(int(n) for n in os.listdir('/proc/self/fd'))\n"
                f"    {body}\n"
                "    time.sleep(3600)\n")
    half = writer("os.write(fd, (1000).to_bytes(4, 'big') + b'{\"passed\": tr')")
    huge = writer("os.write(fd, (50 << 20).to_bytes(4, 'big') + b'x' * 4096)")
    deep = writer("body = b'[' * 5000 + b']' * 5000; os.write(fd, len(body).to_bytes(4, 'big') + body)")
    out = jail.run_checks([half, huge, deep, *CHECKS], LIBRARY_STATE, LIBRARY_STATE, timeout_s=1.0)
    assert out[0].error.startswith("timeout")
    assert "exceeds the cap" in out[1].error
    assert "nesting deeper than" in out[2].error
    assert [o.passed for o in out[3:]] == EXPECTED_CHECKS


def test_when_a_batch_unit_dies_mid_way_only_the_running_check_is_lost(jail: SandboxPool, guard) -> None:
    """Killed from outside while its first check runs, the unit takes only that check's outcome with it:
    the later checks run again in a fresh unit."""
    sleeper = "import time\ndef check_func(final_state):\n    time.sleep(3600)\n"
    result: list[CheckOutcome] = []
    runner = threading.Thread(target=lambda: result.extend(
        jail.run_checks([sleeper, *CHECKS], LIBRARY_STATE, LIBRARY_STATE, timeout_s=300)))
    runner.start()
    supervisor = None
    while supervisor is None and runner.is_alive():
        supervisor = next((unit for z in jail.zygote_host_pids() for unit in children_of(z) if children_of(unit)), None)
        time.sleep(0.02)
    assert supervisor is not None
    os.kill(supervisor, signal.SIGKILL)
    runner.join()
    assert result[0].passed is None and "the batch's unit failed while this check ran" in result[0].error
    assert [o.passed for o in result[1:]] == EXPECTED_CHECKS


def test_big_batches_are_split_across_units_and_keep_their_order(jail: SandboxPool) -> None:
    n = 2 * MAX_CHECKS_PER_UNIT + 7
    checks = [f"def check_func(final_state):\n    return {i} % 3 == 0\n" for i in range(n)]
    out = jail.run_checks(checks, {}, {})
    assert [o.passed for o in out] == [i % 3 == 0 for i in range(n)]
