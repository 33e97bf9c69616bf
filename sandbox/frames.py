"""Host side of the child wire: 4-byte big-endian length + JSON, with deadlines and a size cap.

Replies come from processes running untrusted code, so nothing here trusts them: the length is
capped before reading, the body must parse as a JSON object, and every wait has a deadline.
"""

from __future__ import annotations

import json
import os
import select
import struct
import time
from typing import Any

HEADER = struct.Struct(">I")


class WireError(Exception):
    """The child broke the protocol; `kind` is a runtime ErrorKind (timeout, crash, oversize)."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


def _wait(fd: int, events: int, deadline: float) -> None:
    poller = select.poll()
    poller.register(fd, events)
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise WireError("timeout", "no reply before the deadline")
        if poller.poll(left * 1000):
            return


def send_frame(fd: int, payload: bytes, deadline: float) -> None:
    view = memoryview(HEADER.pack(len(payload)) + payload)
    while view:
        try:
            n = os.write(fd, view)
        except BlockingIOError:
            _wait(fd, select.POLLOUT, deadline)
            continue
        except (BrokenPipeError, OSError) as exc:
            raise WireError("crash", f"the process is gone ({exc.__class__.__name__})") from None
        view = view[n:]


def _read_exact(fd: int, n: int, deadline: float) -> bytes:
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
            raise WireError("crash", "the process closed its reply pipe")
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def recv_frame(fd: int, deadline: float, cap: int) -> dict[str, Any]:
    (size,) = HEADER.unpack(_read_exact(fd, 4, deadline))
    if size > cap:
        raise WireError("oversize", f"reply of {size} bytes exceeds the cap of {cap} bytes")
    body = _read_exact(fd, size, deadline)
    try:
        obj = json.loads(body)
    except (UnicodeDecodeError, ValueError):
        raise WireError("crash", "garbage on the wire (reply is not JSON)") from None
    if not isinstance(obj, dict):
        raise WireError("crash", "garbage on the wire (reply is not a JSON object)")
    return obj
