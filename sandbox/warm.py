"""Units made ready off the caller's path: one verified, cgroup-attached unit per zygote and kind, and the
killing of finished units, both done by one background thread per pool.

Why: an episode (or a check batch) used to pay, before its first frame, a zygote round trip, the host's
verification of the unit from /proc and three cgroup migrations (each waits for the kernel's cgroup lock,
slow on a loaded machine), and at its end another zygote round trip, which queues behind the clone of
the zygote's next unit. Measured at load ~30 on 2 cores: ~17 ms before and ~17 ms after every
episode. A short episode (a BFCL task plays one and scores in another) paid that twice. The work is the
same; it now happens while the caller does something else.

A ready unit is exactly what `Child(...)` returns (verified, in its cgroup, waiting for its first
frame, running nothing); it is handed out only if its zygote has not been replaced since and its
process is still alive, else it is discarded and a unit is made on the caller's path as before.
Nothing untrusted runs in a unit before it is handed out, so keeping it ready changes no guarantee.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from sandbox.child import Child
from sandbox.zygote import Zygote, ZygoteError

log = logging.getLogger("sandbox")
Key = tuple[int, str]  # (zygote index, unit kind)


class UnitKeeper:
    def __init__(self, zygotes: list[Zygote], make: Callable[[Zygote, str], Child]) -> None:
        self._zygotes, self._make = zygotes, make
        self._cond = threading.Condition()
        self._ready: dict[Key, Child] = {}
        self._wanted: list[Key] = []
        self._dying: list[Child] = []
        self._closed = False
        self._thread = threading.Thread(target=self._serve, name="sandbox-keeper", daemon=True)
        self._thread.start()

    def take(self, index: int, kind: str) -> Child | None:
        """The ready unit of (zygote `index`, `kind`), or None; either way the next one is asked for."""
        with self._cond:
            if self._closed:
                return None
            child = self._ready.pop((index, kind), None)
            if (index, kind) not in self._wanted:
                self._wanted.append((index, kind))
            self._cond.notify()
        if child is None:
            return None
        if not self._zygotes[index].serving(child.generation) or child.exited():
            self.dispose(child)  # its jail was replaced, or it died while waiting
            return None
        return child

    def want(self, keys: list[Key]) -> None:
        with self._cond:
            self._wanted.extend(k for k in keys if k not in self._wanted and k not in self._ready)
            self._cond.notify()

    def ready_pids(self) -> list[int]:
        """Host pids of the units ready now (diagnostics, specs)."""
        with self._cond:
            return [c.host_pid for c in self._ready.values() if c.host_pid is not None]

    def wait_ready(self, count: int, timeout_s: float) -> bool:
        with self._cond:
            return self._cond.wait_for(lambda: len(self._ready) >= count and not self._dying, timeout_s)

    def dispose(self, child: Child) -> None:
        """Kill `child` off the caller's path (its pipes are closed at once: it can send nothing more)."""
        child.detach_pipes()
        with self._cond:
            if not self._closed:
                self._dying.append(child)
                self._cond.notify()
                return
        child.kill()

    def _serve(self) -> None:
        while True:
            with self._cond:
                self._cond.wait_for(lambda: self._closed or self._dying or self._wanted)
                if self._closed:
                    return
                dying, self._dying = self._dying, []
                key = self._wanted.pop(0) if not dying and self._wanted else None
            for child in dying:
                self._kill(child)
            if key is not None:
                self._fill(key)
            with self._cond:
                self._cond.notify_all()

    def _fill(self, key: Key) -> None:
        try:
            child = self._make(self._zygotes[key[0]], key[1])
        except ZygoteError as exc:  # the zygote was replaced; the next take asks again
            log.debug("sandbox: no ready unit for zygote %s: %s", key[0], exc)
            return
        except Exception:  # noqa: BLE001 - never let the keeper thread die
            log.exception("sandbox: unexpected error while making a ready unit")
            return
        with self._cond:
            if not self._closed and key not in self._ready:
                self._ready[key] = child
                return
        self._kill(child)

    @staticmethod
    def _kill(child: Child) -> None:
        try:
            child.kill()
        except Exception:  # noqa: BLE001
            log.exception("sandbox: error while killing a unit")

    def close(self) -> None:
        with self._cond:
            self._closed = True
            leftovers = [*self._ready.values(), *self._dying]
            self._ready.clear()
            self._dying = []
            self._cond.notify_all()
        self._thread.join(timeout=30)
        for child in leftovers:
            self._kill(child)
