"""Run one long blocking job in a thread of its own instead of the event loop's shared executor.

`asyncio.to_thread` hands work to the loop's default executor: on this 2-core machine that is 6
threads, shared by every short blocking call of the process (a sandbox call of a validation round, an
episode opening, a scenario check). A programmatic pass holds its thread for seconds (dozens of fresh
episodes), so with six candidates in their passes every other candidate's next round waited for a
whole pass to finish before its one-millisecond sandbox call could start. Long jobs therefore get a
thread each; the short calls keep the shared executor to themselves.
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


async def in_own_thread(fn: Callable[..., T], *args: Any, name: str = "envscaler-long-job") -> T:
    """`await asyncio.to_thread(fn, *args)`, but on a new daemon thread (same context variables). As with
    `to_thread`, cancelling the awaiting task does not stop the thread; its result is then dropped."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()
    context = contextvars.copy_context()

    def deliver(ok: bool, value: Any) -> None:
        if future.cancelled():
            return
        if ok:
            future.set_result(value)
        else:
            future.set_exception(value)

    def run() -> None:
        try:
            value = context.run(fn, *args)
        except BaseException as exc:  # noqa: BLE001 - handed to the awaiting task
            ok, value = False, exc
        else:
            ok = True
        try:
            loop.call_soon_threadsafe(deliver, ok, value)
        except RuntimeError:  # the loop closed while we ran: nobody is waiting any more
            pass

    threading.Thread(target=run, name=name, daemon=True).start()
    return await future
