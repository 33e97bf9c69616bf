"""Ctrl-C and SIGTERM for a command that runs a flow: the first stops it, the second is told to wait, the
third quits at once.

The first signal cancels the flow; the gateway then still waits, at most its stop grace, for the answers
already on their way and records them, so the resume does not pay for them again. asyncio's own SIGINT
handler raises KeyboardInterrupt on a second Ctrl-C, which cut that grace: an outside check's two Ctrl-C
(or two `kill PID`) 0.3 s apart kept 4 of 19 answers that arrived after the first, and the resume sent the
rest again. Here a second signal during the stop is answered with one line and ignored; a third one quits
at once (what a user who insists wants), losing what is still on its way. SIGTERM counts like Ctrl-C.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
import threading
from collections.abc import Coroutine, Iterator
from typing import Any, TypeVar

T = TypeVar("T")

_active: list["Stopping"] = []


class Stopping:
    """The signals one command received, and the flow task the first one cancels."""

    def __init__(self, wait_s: float) -> None:
        self.received: list[str] = []
        self.wait_s = wait_s
        self.task: asyncio.Task[Any] | None = None

    def stop(self, name: str) -> None:
        """Called from a signal handler (the main thread, between two bytecodes)."""
        self.received.append(name)
        if len(self.received) == 1:
            task = self.task
            if task is not None and not task.done():
                task.cancel()
                with contextlib.suppress(RuntimeError):  # wake a loop blocked in select
                    task.get_loop().call_soon_threadsafe(lambda: None)
                return
            raise KeyboardInterrupt
        if len(self.received) == 2:
            again = "Ctrl-C" if name == "SIGINT" else name
            with contextlib.suppress(Exception):
                sys.stderr.write(f"still stopping: recording the answers already on their way (at most "
                                 f"{self.wait_s:g} s); {again} once more quits at once and loses them\n")
                sys.stderr.flush()
            return
        raise KeyboardInterrupt


def _grace_s() -> float:
    from envscaler_core.llm.gateway import SETTLE_RECORD_S, STOP_GRACE_S

    return STOP_GRACE_S + SETTLE_RECORD_S


@contextlib.contextmanager
def stop_signals() -> Iterator[list[str]]:
    """SIGINT and SIGTERM handled as above while the command runs; yields the names of the signals
    received, first first. SIGTERM (`kill PID`, a CI runner's or systemd's stop) used to end the run at
    once, exit 143 without a word, the run left `running`. An ignored SIGINT (a background job started by
    a non-interactive shell) stays ignored."""
    if threading.current_thread() is not threading.main_thread():
        yield []
        return
    from envscaler_core.pipeline import termination

    stopping = Stopping(_grace_s())

    def on_signal(signum: int, frame: Any) -> None:
        stopping.stop("SIGTERM" if signum == signal.SIGTERM else "SIGINT")

    before_term = signal.signal(signal.SIGTERM, on_signal)
    before_int = signal.getsignal(signal.SIGINT)
    if before_int is signal.default_int_handler:
        signal.signal(signal.SIGINT, on_signal)
    termination.register(on_signal)  # Prefect installs its own around the flow run; the flow puts ours back
    _active.append(stopping)
    try:
        yield stopping.received
    finally:
        _active.remove(stopping)
        termination.register(None)
        signal.signal(signal.SIGTERM, before_term)
        if before_int is signal.default_int_handler:
            signal.signal(signal.SIGINT, before_int)


def run_stoppable(coro: Coroutine[Any, Any, T]) -> T:
    """`asyncio.run(coro)` whose task the stop signals cancel (inside `stop_signals`; plain asyncio.run
    outside). A stopped flow raises KeyboardInterrupt, as asyncio.run does after its own Ctrl-C."""
    stopping = _active[-1] if _active and threading.current_thread() is threading.main_thread() else None
    if stopping is None:
        return asyncio.run(coro)

    async def main() -> T:
        stopping.task = asyncio.current_task()
        try:
            return await coro
        finally:
            stopping.task = None

    try:
        return asyncio.run(main())
    except asyncio.CancelledError:
        if stopping.received:
            raise KeyboardInterrupt from None
        raise
