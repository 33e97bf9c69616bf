"""Frames on the member's pipes and the capped stdout/stderr of its calls (jail side, standard library only;
copied next to worker.py). `json.loads` is captured at import, in the zygote, before any env code runs: a
tool rebinding `json.loads` cannot change how the member reads its requests."""

import io
import json
import os
import struct

HEADER = struct.Struct(">I")
_json_loads = json.loads


# ---------------------------------------------------------------------------------------------
# framing
# ---------------------------------------------------------------------------------------------
def read_exact(fd: int, n: int) -> bytes | None:
    chunks, got = [], 0
    while got < n:
        chunk = os.read(fd, n - got)
        if not chunk:
            return None
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def read_frame(fd: int) -> dict | None:
    head = read_exact(fd, 4)
    if head is None:
        return None
    body = read_exact(fd, HEADER.unpack(head)[0])
    return None if body is None else _json_loads(body)


def write_frame(fd: int, text: str) -> None:
    data = text.encode("utf-8")
    data = HEADER.pack(len(data)) + data
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


class CappedOutput(io.TextIOBase):
    """sys.stdout/sys.stderr of a child: keeps the first `cap` characters of a call, drops the rest."""

    def __init__(self, cap: int) -> None:
        self.cap, self.parts, self.size, self.dropped = cap, [], 0, 0

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        text = str(text)
        room = self.cap - self.size
        if room > 0:
            self.parts.append(text[:room])
            self.size += min(room, len(text))
        self.dropped += max(0, len(text) - max(room, 0))
        return len(text)

    def take(self) -> str:
        out = "".join(self.parts)
        if self.dropped:
            out += f"\n[... {self.dropped} characters dropped]"
        self.parts, self.size, self.dropped = [], 0, 0
        return out
