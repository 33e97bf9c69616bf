"""Host handle on one warm zygote: start it, ask it to fork children, reap them, replace it when it fails.

The control channel is a SOCK_SEQPACKET pair (message boundaries for free, SCM_RIGHTS for the
child's pipes). One lock serialises control round trips; the children then talk to their episode
directly over their own pipes, so a slow tool call never blocks the zygote or other episodes.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import threading
from typing import Any

from sandbox.backend import Backend
from sandbox.limits import SandboxLimits


class ZygoteError(RuntimeError):
    """The zygote did not answer properly; it has been killed (and is restarted on next use)."""


class Zygote:
    def __init__(self, backend: Backend, limits: SandboxLimits, workdir: str, boot: dict[str, Any] | None = None) -> None:
        self.backend, self.limits, self.workdir = backend, limits, workdir
        self.boot = dict(boot or {})  # extra start-up parameters for the worker (e.g. modules to preload)
        self.lock = threading.Lock()
        self.proc: subprocess.Popen[bytes] | None = None
        self.sock: socket.socket | None = None
        self.hello: dict[str, Any] = {}
        self.restarts = 0
        self.generation = 0  # bumped per start: a pid from an older jail must never be reaped in a new one
        self._errlog = os.path.join(workdir, f"zygote-{id(self)}.err")
        with self.lock:
            self._start()

    # -- lifecycle (callers hold self.lock) ---------------------------------------------------
    def _start(self) -> None:
        host, jail = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        args = json.dumps({**self.limits.model_dump(), **self.boot, "control_fd": jail.fileno()})
        argv = self.backend.command(self.workdir, [args])
        try:
            with open(self._errlog, "wb") as errlog:
                self.proc = subprocess.Popen(
                    argv, pass_fds=(jail.fileno(),), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                    stderr=errlog, env={"PATH": "/usr/bin:/bin"}, cwd=self.workdir, start_new_session=True,
                )
        finally:
            jail.close()
        self.generation += 1
        self.sock = host
        host.settimeout(self.limits.control_timeout_s)
        try:
            data = host.recv(1 << 16)
            self.hello = json.loads(data) if data else {}
        except (OSError, ValueError):
            self.hello = {}
        if not self.hello.get("hello"):
            err = self._kill()
            raise ZygoteError(f"the zygote did not start: {err or 'no hello message'}")

    def _kill(self) -> str:
        """Kill the whole jail and return what it wrote to stderr, for diagnosis.

        Closing the control socket alone ends a healthy jail (the zygote exits on EOF, and a pid
        namespace dies with its init); the SIGKILLs cover a wedged one. bwrap starts new sessions,
        so the tree is walked rather than trusting one process group."""
        err = ""
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
            try:
                with open(self._errlog, "rb") as fh:
                    err = fh.read()[-500:].decode(errors="replace").strip()
            except OSError:
                pass
        return err

    def close(self) -> None:
        with self.lock:
            self._kill()

    @property
    def pid(self) -> int | None:
        return None if self.proc is None else self.proc.pid

    # -- control ------------------------------------------------------------------------------
    def _roundtrip(self, request: dict[str, Any], want_fds: bool) -> tuple[dict[str, Any], list[int]]:
        if self.sock is None or self.proc is None or self.proc.poll() is not None:
            self._kill()
            self.restarts += 1
            self._start()
        assert self.sock is not None
        fds: list[int] = []
        try:
            self.sock.send(json.dumps(request).encode())
            if want_fds:
                data, fds, _, _ = socket.recv_fds(self.sock, 1 << 16, 2, socket.MSG_CMSG_CLOEXEC)
            else:
                data = self.sock.recv(1 << 16)
            reply = json.loads(data) if data else None
        except (OSError, ValueError) as exc:
            for fd in fds:
                os.close(fd)
            self._kill()
            raise ZygoteError(f"zygote control failed: {exc.__class__.__name__}: {exc}") from None
        if not isinstance(reply, dict) or not reply.get("ok") or (want_fds and len(fds) != 2):
            for fd in fds:
                os.close(fd)
            self._kill()
            raise ZygoteError(f"zygote sent an unexpected reply: {str(reply)[:200]}")
        return reply, fds

    def spawn(self, kind: str, call_timeout_s: float) -> tuple[int, int, int, int]:
        """Fork a fresh child; returns (pid in the jail, generation, request fd, reply fd).
        Retries once on a new zygote."""
        with self.lock:
            for attempt in (1, 2):
                try:
                    reply, (req_fd, rep_fd) = self._roundtrip(
                        {"op": "spawn", "kind": kind, "call_timeout_s": call_timeout_s}, want_fds=True)
                    os.set_blocking(req_fd, False)
                    return int(reply["pid"]), self.generation, req_fd, rep_fd
                except ZygoteError:
                    if attempt == 2:
                        raise
                    self.restarts += 1
        raise AssertionError("unreachable")

    def reap(self, pid: int, generation: int) -> dict[str, Any] | None:
        """Kill (if still running) and wait for a child; returns its exit status description.
        A child of an earlier jail generation died with that jail: nothing to do."""
        with self.lock:
            if self.sock is None or generation != self.generation or self.proc is None or self.proc.poll() is not None:
                return None
            try:
                reply, _ = self._roundtrip({"op": "reap", "pid": pid}, want_fds=False)
            except ZygoteError:
                return None
            return reply.get("status")

    def ping(self) -> bool:
        with self.lock:
            try:
                self._roundtrip({"op": "ping"}, want_fds=False)
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
