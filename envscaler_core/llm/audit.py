"""Group commit of the gateway's audit rows: durable before the call returns, without blocking the loop.

Each logical LLM call leaves one `LLMCall` row, and that row is also the persistent response cache: a
run killed after a call returned but before its row was written would pay for that call again on
resume. So a call returns only once its row is committed. Committing one row per call on the event
loop thread cost ~10-20 ms of blocked loop per call (a DuckDB commit), which stalled every other call
in flight; here the commit runs on a writer thread, and every row that arrived while the previous
commit was running goes into the next one (group commit, as databases do for their own logs). A
caller therefore waits at most for the commit in progress plus its own, and a kill loses only calls
whose rows were not yet committed, i.e. calls that had not returned to the pipeline yet.

The writer thread exists only while rows are pending (it exits when the queue is empty), so idle
gateways hold no thread. Futures are `concurrent.futures.Future`s so callers on any event loop (the
gateway is shared across loops) can await them.
"""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import Future
from typing import Protocol, Sequence

from envscaler_core.models.llm import LLMCall


class AuditStore(Protocol):
    def record_llm_calls(self, calls: Sequence[LLMCall]) -> None: ...


class AuditLog:
    """`await log.write(call)` returns once `call` is committed (or raises the store's error)."""

    def __init__(self, store: AuditStore, max_batch: int = 1000) -> None:
        self.store = store
        self.max_batch = max_batch
        self._lock = threading.Lock()
        self._pending: list[tuple[LLMCall, Future[None]]] = []
        self._writer: threading.Thread | None = None
        self.commits = 0  # transactions written (rows / commits = the batching achieved)
        self.rows = 0

    def submit(self, call: LLMCall) -> Future[None]:
        done: Future[None] = Future()
        with self._lock:
            self._pending.append((call, done))
            if self._writer is None:
                self._writer = threading.Thread(target=self._drain, name="llm-audit-writer", daemon=True)
                self._writer.start()
        return done

    async def write(self, call: LLMCall) -> None:
        await asyncio.wrap_future(self.submit(call))

    def flush(self, timeout: float | None = None) -> None:
        """Block until every row submitted so far is written (shutdown, synchronous callers): the writer
        exits only once the queue is empty."""
        with self._lock:
            writer = self._writer
        if writer is not None and writer is not threading.current_thread():
            writer.join(timeout)

    def _take(self) -> list[tuple[LLMCall, Future[None]]]:
        with self._lock:
            batch, self._pending = self._pending[:self.max_batch], self._pending[self.max_batch:]
            if not batch:
                self._writer = None
            return batch

    def _drain(self) -> None:
        while batch := self._take():
            try:
                self.store.record_llm_calls([call for call, _ in batch])
            except BaseException as exc:  # noqa: BLE001 - handed to every waiting caller
                for _, f in batch:
                    f.set_exception(exc)
            else:
                self.commits += 1
                self.rows += len(batch)
                for _, f in batch:
                    f.set_result(None)
