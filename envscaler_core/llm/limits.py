"""Client-side throttles: a concurrency cap and a requests-per-minute pacer.

The gateway is shared across event loops (Prefect runs each task under its own `asyncio.run`, sync
wrappers start their own loop), and an `asyncio.Semaphore` is bound to the loop that first waits on it.
So the cap is one semaphore *per live loop*, held in a weak map that forgets loops once they are gone.
The pacer is loop-agnostic: a thread-safe "next free slot" clock that each request reserves from, then
sleeps on in its own loop.
"""

from __future__ import annotations

import asyncio
import threading
import time
import weakref


class PerLoopSemaphore:
    """`async with cap:` limits in-flight requests to `limit` within the running event loop."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._lock = threading.Lock()
        self._by_loop: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = (
            weakref.WeakKeyDictionary()
        )

    def _current(self) -> asyncio.Semaphore:
        loop = asyncio.get_running_loop()
        with self._lock:
            sem = self._by_loop.get(loop)
            if sem is None:
                sem = self._by_loop[loop] = asyncio.Semaphore(self.limit)
            return sem

    async def __aenter__(self) -> None:
        await self._current().acquire()

    async def __aexit__(self, *exc: object) -> None:
        self._current().release()

    async def acquire(self) -> None:
        await self._current().acquire()

    def release(self) -> None:
        self._current().release()


class RatePacer:
    """Spaces request starts at least `60 / rpm` seconds apart, across threads and loops.

    Even spacing (no burst allowance) keeps the arithmetic obvious: n requests take at least
    (n - 1) * 60 / rpm seconds, which is what a provider's per-minute limit wants to see.
    """

    def __init__(self, requests_per_minute: int | None) -> None:
        self.interval = 60.0 / requests_per_minute if requests_per_minute else 0.0
        self._lock = threading.Lock()
        self._next = 0.0

    def reserve(self) -> float:
        """Claim the next slot; returns how long the caller must wait before sending."""
        if not self.interval:
            return 0.0
        with self._lock:
            now = time.monotonic()
            slot = max(now, self._next)
            self._next = slot + self.interval
            return slot - now

    async def wait(self) -> None:
        delay = self.reserve()
        if delay > 0:
            await asyncio.sleep(delay)
