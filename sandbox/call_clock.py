"""A call's time limit counted in time the machine gave the call, not in wall-clock time alone.

A wall-clock deadline blames the call for the machine's load: with a dozen hostile units spinning on
two cores, an honest call that needs one second of CPU waited in the run queue for most of its five
seconds and was killed as a timeout (a red team turned an innocent episode's verdict this way). So
the deadline moves on by the time the unit's main thread spent runnable but waiting for a CPU (the
kernel's `run_delay`, `/proc/<pid>/schedstat`), up to a hard cap of `HARD_FACTOR` times the limit.
A call that sleeps or blocks is not runnable and gets no extension; a call starved by others does.
The kernel is asked only once the nominal deadline has passed, so an ordinary call costs one read.
"""

from __future__ import annotations

import time

HARD_FACTOR = 4.0


def run_delay_s(host_pid: int | None) -> float | None:
    """Seconds the process's main thread has waited, runnable, for a CPU (None: cannot tell)."""
    if host_pid is None:
        return None
    try:
        with open(f"/proc/{host_pid}/schedstat", "rb") as f:
            return int(f.read().split()[1]) / 1e9
    except (OSError, IndexError, ValueError):
        return None


class CallClock:
    """The deadline of one exchange with a unit; `left()` is what the wire waits with."""

    def __init__(self, limit_s: float, host_pid: int | None, hard_factor: float = HARD_FACTOR) -> None:
        self.limit_s = limit_s
        self._pid = host_pid
        self._start = time.monotonic()
        self._delay0 = run_delay_s(host_pid)
        self._deadline = self._start + limit_s
        self._hard = self._start + limit_s * hard_factor
        self.starved_s = 0.0

    def left(self) -> float:
        now = time.monotonic()
        if now < self._deadline:
            return self._deadline - now
        delay = run_delay_s(self._pid)
        if delay is not None and self._delay0 is not None:
            self.starved_s = max(delay - self._delay0, 0.0)
            self._deadline = min(self._start + self.limit_s + self.starved_s, self._hard)
        return max(self._deadline - now, 0.0)
