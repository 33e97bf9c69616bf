"""Host handle on one forked child (an episode or a check batch): exchange frames, kill, explain deaths."""

from __future__ import annotations

import json
import os
import time
import weakref
from typing import Any

from sandbox.frames import WireError, recv_frame, send_frame
from sandbox.zygote import Zygote


class ChildFailure(Exception):
    """The child is gone (killed or died); `kind` is the runtime ErrorKind to report."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message


def explain(failure: WireError, status: dict[str, Any] | None, timeout_s: float) -> ChildFailure:
    """Turn a broken exchange plus the reaped exit status into (kind, one clear sentence)."""
    if failure.kind == "timeout":
        return ChildFailure("timeout", f"the call exceeded its {timeout_s:g} s wall-clock limit; the process was killed")
    if failure.kind == "oversize":
        return ChildFailure("oversize", f"{failure}; the process was killed")
    if status and status.get("signal_name") == "SIGXCPU":
        return ChildFailure("timeout", "the call exceeded its CPU-time limit (SIGXCPU); the process was killed")
    if status and "signal" in status:
        return ChildFailure("crash", f"{failure}: the process died from {status['signal_name']}")
    if status and "exit_code" in status:
        return ChildFailure("crash", f"{failure}: the process exited with status {status['exit_code']} without replying")
    return ChildFailure("crash", str(failure))


class Child:
    def __init__(self, zygote: Zygote, kind: str, call_timeout_s: float, frame_cap: int) -> None:
        self.zygote, self.frame_cap = zygote, frame_cap
        self.pid, self.generation, self.req_fd, self.rep_fd = zygote.spawn(kind, call_timeout_s)
        self.alive = True
        # An episode dropped without close(): closing our pipe ends makes the child exit on EOF and the
        # zygote reaps it, so forgotten episodes do not pile up as live processes.
        self._close_fds = weakref.finalize(self, _close_all, self.req_fd, self.rep_fd)

    def send(self, payload: bytes, timeout_s: float) -> None:
        try:
            send_frame(self.req_fd, payload, time.monotonic() + timeout_s)
        except WireError as exc:
            raise explain(exc, self.kill(), timeout_s) from None

    def exchange(self, payload: bytes, timeout_s: float) -> dict[str, Any]:
        """Send one request and wait for its reply; any failure kills the child and raises ChildFailure."""
        deadline = time.monotonic() + timeout_s
        try:
            send_frame(self.req_fd, payload, deadline)
            return recv_frame(self.rep_fd, deadline, self.frame_cap)
        except WireError as exc:
            raise explain(exc, self.kill(), timeout_s) from None

    def kill(self) -> dict[str, Any] | None:
        """Close our pipe ends and have the zygote SIGKILL + reap the child; returns its exit status."""
        if not self.alive:
            return None
        self.alive = False
        self._close_fds()
        return self.zygote.reap(self.pid, self.generation)


def _close_all(*fds: int) -> None:
    for fd in fds:
        try:
            os.close(fd)
        except OSError:
            pass


def encode(obj: Any) -> bytes:
    """Request body; raises TypeError/ValueError for values JSON cannot carry."""
    return json.dumps(obj, allow_nan=False).encode()
