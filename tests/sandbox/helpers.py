"""Shared pieces of the sandbox specs: env sources, host-invariant checks, a loopback listener."""

from __future__ import annotations

import json
import os
import socket
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

from envscaler_core.runtime import CallOutcome

ATTACK_TEMPLATE = '''
import os, sys, time, json, signal, socket, ctypes, threading, builtins, resource
MARKER = {marker!r}
PORT = {port!r}
libc = ctypes.CDLL(None, use_errno=True)


def errno_of(ret):
    """A raw syscall's outcome: the return value, or the errno name when it failed."""
    import errno
    return ret if ret != -1 else errno.errorcode.get(ctypes.get_errno(), ctypes.get_errno())


def reply_fd():
    """This process's reply pipe (the write-only FIFO it was given)."""
    import fcntl, stat
    for name in os.listdir('/proc/self/fd'):
        try:
            fd = int(name)
            if stat.S_ISFIFO(os.fstat(fd).st_mode) and fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE == os.O_WRONLY:
                return fd
        except OSError:
            pass


def forge(body):
    """Write `body` as a reply frame, ahead of the worker's own, and hold on."""
    os.write(reply_fd(), len(body).to_bytes(4, 'big') + body)
    time.sleep(30)


def other_pids():
    """Every pid this process can name in /proc, and guesses at the jail's low pids."""
    seen = {{int(p) for p in os.listdir('/proc') if p.isdigit()}}
    return sorted((seen | set(range(1, 64))) - {{os.getpid()}})

class Attack:
    def __init__(self, init_config=None):
        cfg = init_config or {{}}
        self.n = cfg.get("n", 0)

    def ping(self) -> dict:
        self.n += 1
        return {{"success": True, "data": self.n}}

    def attack(self):
{body}
'''

LIBRARY = '''
class Library:
    def __init__(self, init_config: dict = None):
        cfg = init_config or {}
        self.books = cfg.get("books", {})

    def get_book(self, book_id: str) -> dict:
        if book_id not in self.books:
            return {"success": False, "error": "no such book"}
        return {"success": True, "data": self.books[book_id]}
'''
LIBRARY_STATE = {"books": {"b1": {"title": "Dune", "status": "available"}}}
CHECKS = [
    "def check_func(final_state):\n    return final_state['books']['b1']['status'] == 'available'\n",
    "def check_func(final_state):\n    return final_state['books']['b1']['status'] == 'lent'\n",
    "def check_func(final_state):\n    return final_state['missing']\n",
]
EXPECTED_CHECKS = [True, False, None]  # CHECKS on LIBRARY_STATE


class Bystander:
    """Another scenario's episode, mid-way, plus its check outcomes: an attack must change neither."""

    def __init__(self, pool: Any) -> None:
        self.pool = pool
        self.ep = pool.open_episode(LIBRARY, "Library", LIBRARY_STATE)
        assert self.first_call_is_right()

    def first_call_is_right(self) -> bool:
        out = self.ep.call("get_book", {"book_id": "b1"})
        return out.ok and out.result == {"success": True, "data": {"title": "Dune", "status": "available"}}

    def unharmed(self) -> bool:
        checks = [o.passed for o in self.pool.run_checks(CHECKS, LIBRARY_STATE, self.ep.state)]
        return self.first_call_is_right() and self.ep.restarts == 0 and checks == EXPECTED_CHECKS


def attack_code(body: str, marker: str = "", port: int = 0) -> str:
    return ATTACK_TEMPLATE.format(marker=marker, port=port, body=textwrap.indent(textwrap.dedent(body).strip(), " " * 8))


def attack_in_a_fresh_pool(code: str, **settings: object) -> Any:
    """What `attack()` of `code` returns in an episode of a new one-zygote pool (`settings`: SandboxSettings)."""
    from envscaler_core.config import SandboxSettings
    from sandbox import SandboxPool

    with SandboxPool(SandboxSettings(workers=1, **settings)) as pool:
        with pool.open_episode(code, "Attack", None) as ep:
            out = ep.call("attack", {})
            assert out.ok, out
            return out.result


def children_of(pid: int) -> list[int]:
    """Host pids of every live (non-zombie) descendant of `pid`."""
    parents: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if fields[0] == "Z":
            continue
        parents.setdefault(int(fields[1]), []).append(int(entry))
    out, todo = [], [pid]
    while todo:
        for child in parents.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def jail_process_count(pool: Any) -> int:
    return sum(len(children_of(root)) for root in pool.host_pids())


def steady_process_count(pool: Any, settle_s: float = 0.3, timeout: float = 10.0) -> int:
    """The jails' process count once it has not changed for `settle_s`."""
    end = time.monotonic() + timeout
    count, since = jail_process_count(pool), time.monotonic()
    while time.monotonic() < end:
        time.sleep(0.05)
        now = jail_process_count(pool)
        if now != count:
            count, since = now, time.monotonic()
        elif time.monotonic() - since >= settle_s:
            break
    return count


def wait_for_process_count(pool: Any, expected: int, timeout: float = 5.0) -> int:
    end = time.monotonic() + timeout
    count = jail_process_count(pool)
    while count != expected and time.monotonic() < end:
        time.sleep(0.02)
        count = jail_process_count(pool)
    return count


class Listener:
    """A loopback TCP + UDP listener on one port, counting everything that reaches it."""

    def __init__(self) -> None:
        self.tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.tcp.bind(("127.0.0.1", 0))
        self.tcp.listen(16)
        self.port = self.tcp.getsockname()[1]
        self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.udp.bind(("127.0.0.1", self.port))
        self.hits = 0
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._accept, daemon=True),
                         threading.Thread(target=self._datagrams, daemon=True)]
        for t in self._threads:
            t.start()

    def _accept(self) -> None:
        self.tcp.settimeout(0.2)
        while not self._stop.is_set():
            try:
                conn, _ = self.tcp.accept()
            except OSError:
                continue
            self.hits += 1
            conn.close()

    def _datagrams(self) -> None:
        self.udp.settimeout(0.2)
        while not self._stop.is_set():
            try:
                self.udp.recv(65536)
            except OSError:
                continue
            self.hits += 1

    def close(self) -> None:
        self._stop.set()
        for t in self._threads:
            t.join(timeout=2)
        self.tcp.close()
        self.udp.close()


def text_of(*outcomes: CallOutcome) -> str:
    return "\n".join(o.model_dump_json() for o in outcomes)


def zygote_fingerprint(pool: Any) -> list[tuple[str, str]]:
    """What an attack on a zygote would change, read from the host: its seccomp mode and its rlimits."""
    out = []
    for pid in pool.zygote_host_pids():
        status = Path(f"/proc/{pid}/status").read_text()
        seccomp = next(line for line in status.splitlines() if line.startswith("Seccomp:"))
        out.append((seccomp, Path(f"/proc/{pid}/limits").read_text()))
    return out


def host_shmem_kib() -> int:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("Shmem:"):
            return int(line.split()[1])
    raise AssertionError("no Shmem line in /proc/meminfo")


def cpu_ticks(pid: int) -> int:
    """utime + stime of a host process, in clock ticks."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def benign_call_works(pool: Any) -> bool:
    ep = pool.open_episode(LIBRARY, "Library", LIBRARY_STATE)
    try:
        out = ep.call("get_book", {"book_id": "b1"})
        return out.ok and out.result == {"success": True, "data": {"title": "Dune", "status": "available"}}
    finally:
        ep.close()


def apply_diff(state: dict[str, Any], diff: dict[str, Any]) -> dict[str, Any]:
    """Apply our documented diff shape to a copy of `state` (the test's own reading of the format)."""
    doc = json.loads(json.dumps(state))
    for change in diff.get("changes", []):
        parts = [p.replace("~1", "/").replace("~0", "~") for p in change["path"].split("/")[1:]]
        parent = doc
        for part in parts[:-1]:
            parent = parent[int(part)] if isinstance(parent, list) else parent[part]
        last = parts[-1]
        if isinstance(parent, list):
            idx = int(last)
            if change["op"] == "add":
                parent.insert(idx, change["new"])
            elif change["op"] == "remove":
                del parent[idx]
            else:
                parent[idx] = change["new"]
        elif change["op"] == "remove":
            del parent[last]
        else:
            parent[last] = change["new"]
    return doc


def one_check(pool: Any, source: str, state: dict[str, Any]) -> Any:
    """The outcome of the check `source` run once on `state` as both states, in a fresh unit of `pool`."""
    from sandbox.checks import run_checks

    [outcome] = run_checks(pool, [source], state, state, 5.0)
    return outcome


def assert_check_refused(pool: Any, source: str, state: dict[str, Any], why: str) -> None:
    """The check `source` gets no verdict on `state`, with `why` in its error."""
    outcome = one_check(pool, source, state)
    assert outcome.passed is None and why in (outcome.error or ""), outcome
