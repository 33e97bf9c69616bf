"""Host handle on one warm zygote: start it, have it create units, reap them, replace it when it fails.

The control channel is a SOCK_SEQPACKET pair (message boundaries for free, SCM_RIGHTS for a unit's
descriptors, SCM_CREDENTIALS on the hello so we learn the zygote's host pid). A re-entrant lock
serialises control round trips; units then talk to the host directly over their own pipes, so a slow
tool call never blocks the zygote or other episodes.

A zygote is not trusted: every (re)start runs the pool's health check (a real unit loading a tiny class)
before the zygote serves anything, every unit it creates is verified from outside (unit_check.py), and
a zygote that fails either is killed and started afresh. Its stderr is a pipe, never a host file.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import socket
import struct
import subprocess
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sandbox.backend import Backend
from sandbox.jail_json import JSONLimitError, loads
from sandbox.limits import SandboxLimits
from sandbox.unit_check import ProcIdentity, identity

log = logging.getLogger("sandbox")
CONTROL_MAX = 1 << 16
STDERR_KEEP = 4000


class ZygoteError(RuntimeError):
    """The zygote did not answer properly; it has been killed (and is restarted on next use)."""


@dataclass(frozen=True)
class Spawned:
    pid: int  # in the jail's pid namespace (the unit's init, or the member in shared mode)
    generation: int
    req_fd: int
    rep_fd: int
    setup_fd: int
    spare_fds: tuple[int, int, int] | None = None  # a "pair" unit's spare: request, reply, setup


def recv_with_creds(sock: socket.socket, size: int) -> tuple[bytes, int | None]:
    """One message and the sender's pid as our pid namespace sees it (SO_PASSCRED must be on)."""
    data, ancillary, _, _ = sock.recvmsg(size, socket.CMSG_SPACE(struct.calcsize("iII")))
    pid = None
    for level, kind, payload in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_CREDENTIALS and len(payload) >= 12:
            pid = struct.unpack("iII", payload[:12])[0]
    return data, pid


def parse_control(data: bytes) -> Any:
    """Control messages are small and flat; anything else is garbage."""
    return loads(data, 4) if data else None


class Zygote:
    def __init__(self, backend: Backend, limits: SandboxLimits, workdir: str, allow_shared: bool,
                 health_check: Callable[[Zygote], str | None], boot: dict[str, Any] | None = None) -> None:
        self.backend, self.limits, self.workdir = backend, limits, workdir
        self.allow_shared, self.health_check = allow_shared, health_check
        self.boot = dict(boot or {})  # extra start-up parameters for the worker (e.g. modules to preload)
        self.lock = threading.RLock()
        self.proc: subprocess.Popen[bytes] | None = None
        self.sock: socket.socket | None = None
        self.hello: dict[str, Any] = {}
        self.identity: ProcIdentity | None = None
        self.restarts = 0
        self.generation = 0  # bumped per start: a pid from an older jail must never be reaped in a new one
        self._stderr: int | None = None
        self._in_health_check = False
        with self.lock:
            self._start()

    @property
    def isolated(self) -> bool:
        return self.hello.get("isolation") == "namespaces"

    @property
    def seccomp(self) -> bool:
        return bool(self.hello.get("seccomp"))

    def serving(self, generation: int) -> bool:
        """Is the jail of `generation` still the one running (not replaced, not killed, not dead)?"""
        return (generation == self.generation and self.sock is not None and self.proc is not None
                and self.proc.poll() is None)

    @property
    def pid(self) -> int | None:
        """Host pid of the jail's root process (bwrap or setpriv)."""
        return None if self.proc is None else self.proc.pid

    @property
    def host_pid(self) -> int | None:
        """Host pid of the zygote process itself."""
        return None if self.identity is None else self.identity.host_pid

    # -- lifecycle (callers hold self.lock) ---------------------------------------------------
    def _start(self) -> None:
        host, jail = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        host.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
        err_r, err_w = os.pipe()
        args = json.dumps({**self.limits.model_dump(), **self.boot, "control_fd": jail.fileno()})
        try:
            self.proc = subprocess.Popen(
                self.backend.command(self.workdir, [args]), pass_fds=(jail.fileno(),), stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL, stderr=err_w, env=self.backend.env(), cwd=self.workdir,
                start_new_session=True)
        finally:
            jail.close()
            os.close(err_w)
        os.set_blocking(err_r, False)
        self._stderr, self.sock = err_r, host
        self.generation += 1
        host.settimeout(self.limits.control_timeout_s)
        try:
            data, host_pid = recv_with_creds(host, CONTROL_MAX)
            hello = parse_control(data)
            host.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 0)
            self.hello = hello if isinstance(hello, dict) and hello.get("hello") is True and host_pid else {}
            self.identity = identity(host_pid) if self.hello else None
        except (OSError, JSONLimitError) as exc:
            self.hello, self.identity = {}, None
            log.debug("zygote hello failed: %s", exc)
        if not self.hello:
            raise ZygoteError(f"the zygote did not start: {self._kill() or 'no hello message'}")
        if self.hello.get("hash_seed") != self.backend.hash_seed:
            seed = self.hello.get("hash_seed")
            self._kill()
            raise ZygoteError(f"the zygote runs with hash seed {seed!r}, not {self.backend.hash_seed!r}")
        if not self.isolated and self.limits.isolation == "namespaces" and not self.allow_shared:
            problem = self.hello.get("units_problem")
            self._kill()
            raise ZygoteError(f"this host cannot give each episode its own namespaces ({problem}); set "
                              "sandbox.allow_weak=true to run all units of a jail in one shared namespace")
        self._in_health_check = True
        try:
            problem = self.health_check(self)
        finally:
            self._in_health_check = False
        if problem:
            err = self._kill()
            raise ZygoteError(f"the new zygote failed its health check: {problem}" + (f" ({err})" if err else ""))

    def _read_stderr(self) -> str:
        if self._stderr is None:
            return ""
        chunks = []
        try:
            while chunk := os.read(self._stderr, 1 << 16):
                chunks.append(chunk)
        except (BlockingIOError, OSError):
            pass
        return b"".join(chunks)[-STDERR_KEEP:].decode(errors="replace").strip()

    def _kill(self) -> str:
        """Kill the whole jail and return what it wrote to stderr, for diagnosis.

        Closing the control socket alone ends a healthy jail (the zygote exits on EOF, and a pid
        namespace dies with its init); the SIGKILLs cover a wedged one. bwrap starts new sessions,
        so the tree is walked rather than trusting one process group."""
        if self.sock is not None:
            self.sock.close()
            self.sock = None
        if self.proc is not None:
            for pid in [self.proc.pid, *descendants(self.proc.pid)]:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
            self.proc = None
        err = self._read_stderr()
        if self._stderr is not None:
            os.close(self._stderr)
            self._stderr = None
        self.identity = None
        return err

    def close(self) -> None:
        with self.lock:
            self._kill()

    def replace(self, generation: int, why: str) -> None:
        """This zygote failed (a unit did not verify, a health check failed): kill it; the next use starts
        a new one (with a health check). A stale `generation` means it was replaced already."""
        with self.lock:
            if generation == self.generation and self.sock is not None:
                log.warning("replacing sandbox zygote (pid %s): %s", self.host_pid, why)
                self._kill()

    def _ensure_running(self) -> None:
        if self.sock is not None and self.proc is not None and self.proc.poll() is None:
            return
        if self._in_health_check:
            raise ZygoteError("the zygote died during its health check")
        self._kill()
        self.restarts += 1
        self._start()

    # -- control ------------------------------------------------------------------------------
    def _roundtrip(self, request: dict[str, Any], nfds: int) -> tuple[dict[str, Any], list[int]]:
        self._ensure_running()
        assert self.sock is not None
        fds: list[int] = []
        try:
            self.sock.send(json.dumps(request).encode())
            if nfds:
                data, fds, _, _ = socket.recv_fds(self.sock, CONTROL_MAX, nfds, socket.MSG_CMSG_CLOEXEC)
            else:
                data = self.sock.recv(CONTROL_MAX)
            reply = parse_control(data)
        except (OSError, JSONLimitError) as exc:
            for fd in fds:
                os.close(fd)
            err = self._kill()
            raise ZygoteError(f"zygote control failed: {exc.__class__.__name__}: {exc}"
                              + (f" ({err})" if err else "")) from None
        if not isinstance(reply, dict) or reply.get("ok") is not True or len(fds) != nfds:
            for fd in fds:
                os.close(fd)
            self._kill()
            raise ZygoteError(f"zygote sent an unexpected reply: {str(reply)[:200]}")
        return reply, fds

    def spawn(self, kind: str = "episode") -> Spawned:
        """Have the zygote hand over a unit ("episode"; "batch": a check-batch supervisor; "pair": an
        episode with a spare member); retries once on a new zygote."""
        nfds = 6 if kind == "pair" else 3
        with self.lock:
            for attempt in (1, 2):
                try:
                    reply, fds = self._roundtrip({"op": "spawn", "kind": kind}, nfds=nfds)
                    pid = reply.get("pid")
                    if type(pid) is not int or pid <= 0:
                        for fd in fds:
                            os.close(fd)
                        self._kill()
                        raise ZygoteError(f"zygote sent an unexpected pid {str(pid)[:40]}")
                    os.set_blocking(fds[0], False)
                    spare = None
                    if kind == "pair":
                        os.set_blocking(fds[3], False)
                        spare = (fds[3], fds[4], fds[5])
                    return Spawned(pid, self.generation, fds[0], fds[1], fds[2], spare)
                except ZygoteError:
                    if attempt == 2 or self._in_health_check:
                        raise
        raise AssertionError("unreachable")

    def reap(self, pid: int, generation: int, wait: bool = True) -> dict[str, Any] | None:
        """Kill a unit (if still running); with `wait`, wait for it and return its exit status description.
        A unit of an earlier jail generation died with that jail: nothing to do."""
        with self.lock:
            if self.sock is None or generation != self.generation or self.proc is None or self.proc.poll() is not None:
                return None
            try:
                reply, _ = self._roundtrip({"op": "reap", "pid": pid, "wait": wait}, nfds=0)
            except ZygoteError:
                return None
            status = reply.get("status")
            return status if isinstance(status, dict) else None

    def ping(self) -> bool:
        with self.lock:
            try:
                self._roundtrip({"op": "ping"}, nfds=0)
                return True
            except ZygoteError:
                return False


def descendants(root: int) -> list[int]:
    """Host pids below `root`, from /proc (children of a jail live in other sessions)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as fh:
                    ppid = int(fh.read().rsplit(b")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry))
    out, todo = [], [root]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out
