"""Host side of the unit wire: 4-byte big-endian length + JSON, with deadlines and a size cap.

Replies come from processes running untrusted code, so nothing here trusts them: the length is
capped before reading, every wait has a deadline, and the body goes through `jail_json.loads` (strict
UTF-8 without lone surrogates, no NaN/Infinity, 64-bit integers, nesting capped by a non-recursive
pre-scan) and must be a JSON object. Every violation is a `WireError`, never another exception.
"""

from __future__ import annotations

import os
import select
import struct
import time
from typing import Any

from sandbox.call_clock import CallClock
from sandbox.jail_json import JSONLimitError, JSONTooManyValues, loads

HEADER = struct.Struct(">I")


class WireError(Exception):
    """The child broke the protocol; `kind` is a runtime ErrorKind (timeout, crash, oversize)."""

    def __init__(self, kind: str, message: str, gone: bool = False) -> None:
        super().__init__(message)
        self.kind = kind
        self.gone = gone  # the process is already exiting: let it finish, so its real cause of death shows


Deadline = float | CallClock  # a monotonic time, or a call's clock that allows for a starved unit


def _wait(fd: int, events: int, deadline: Deadline) -> None:
    poller = select.poll()
    poller.register(fd, events)
    while True:
        left = deadline.left() if isinstance(deadline, CallClock) else deadline - time.monotonic()
        if left <= 0:
            raise WireError("timeout", "no reply before the deadline")
        if poller.poll(left * 1000):
            return


def send_frame(fd: int, payload: bytes, deadline: Deadline) -> None:
    view = memoryview(HEADER.pack(len(payload)) + payload)
    while view:
        try:
            n = os.write(fd, view)
        except BlockingIOError:
            _wait(fd, select.POLLOUT, deadline)
            continue
        except (BrokenPipeError, OSError) as exc:
            raise WireError("crash", f"the process is gone ({exc.__class__.__name__})", gone=True) from None
        view = view[n:]


def _read_exact(fd: int, n: int, deadline: Deadline) -> bytes:
    chunks: list[bytes] = []
    got = 0
    while got < n:
        _wait(fd, select.POLLIN, deadline)
        try:
            chunk = os.read(fd, min(n - got, 1 << 20))
        except BlockingIOError:
            continue
        except OSError as exc:
            raise WireError("crash", f"reading the reply failed ({exc.__class__.__name__})") from None
        if not chunk:
            raise WireError("crash", "the process closed its reply pipe", gone=True)
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def parse_reply(body: bytes, max_depth: int, max_values: int | None = None) -> dict[str, Any]:
    """A reply body as a dict, or WireError('crash') naming the rule it breaks (`max_values`: counted
    before parsing, so a reply cannot make the host build more objects than that)."""
    try:
        obj = loads(body, max_depth, max_values)
    except JSONTooManyValues as exc:  # a reply over a cap, as one over the byte cap: `oversize`, not garbage
        raise WireError("oversize", f"reply of {exc.size} values, over the cap of {exc.cap} values (twice the "
                        "state_values_cap: a state and a result at their cap)") from None
    except JSONLimitError as exc:
        raise WireError("crash", f"garbage on the wire (reply refused: {exc})") from None
    if not isinstance(obj, dict):
        raise WireError("crash", "garbage on the wire (reply is not a JSON object)")
    return obj


def recv_frame(fd: int, deadline: Deadline, cap: int, max_depth: int,
               max_values: int | None = None) -> tuple[dict[str, Any], int]:
    """(reply, its size in bytes)."""
    (size,) = HEADER.unpack(_read_exact(fd, 4, deadline))
    if size > cap:
        raise WireError("oversize", f"reply of {size} bytes exceeds the cap of {cap} bytes")
    return parse_reply(_read_exact(fd, size, deadline), max_depth, max_values), size
