"""Group commit of the gateway's audit rows, off the caller's path.

Each logical LLM call leaves one `LLMCall` row, and that row is also the persistent response cache: a
run killed after a call returned but before its row was written would pay for that call again on
resume. With a journal (`journal.py`, the default for a store on disk) the row is written to the
journal file before the call returns, which a kill cannot undo, and committed to the store on a
writer thread: the call does not wait for the database. Without one (a store with no place for a
journal) the call waits for its commit as before. Either way commits are grouped: every row that
arrived while the previous commit was running goes into the next one (as databases do for their own
logs), and a commit never runs on the event loop (that cost ~10-20 ms of blocked loop per call).

The writer thread exists only while rows are pending (it exits when the queue is empty), so idle
gateways hold no thread. Futures are `concurrent.futures.Future`s so callers on any event loop (the
gateway is shared across loops) can await them.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import uuid
from concurrent.futures import Future
from typing import Any, Protocol, Sequence

from envscaler_core.llm.journal import CallJournal, journal_dirs, replay_orphans
from envscaler_core.models.llm import LLMCall

log = logging.getLogger(__name__)


class AuditStore(Protocol):
    def record_llm_calls(self, calls: Sequence[LLMCall], call_ids: Sequence[str] | None = None) -> None: ...


class AuditLog:
    """`await log.write(call)` returns once `call` is committed (or raises the store's error)."""

    def __init__(self, store: AuditStore, max_batch: int = 1000, journal: CallJournal | None = None) -> None:
        self.store = store
        self.max_batch = max_batch
        self.journal = journal
        self._lock = threading.Lock()
        self._pending: list[tuple[str, LLMCall, Future[None]]] = []
        self._writer: threading.Thread | None = None
        self.error: BaseException | None = None
        """The first failed commit of a journaled row: the row stays in the journal (the next gateway on
        the store replays it) and `flush` raises this."""
        self._retired: CallJournal | None = None  # a journal switched off: deleted once its rows are in
        self.commits = 0  # transactions written (rows / commits = the batching achieved)
        self.rows = 0

    def submit(self, call: LLMCall) -> Future[None]:
        """The future is done when the row is committed; with a journal the row is safe from a kill
        already when this returns."""
        done: Future[None] = Future()
        call_id = uuid.uuid4().hex
        with self._lock:
            if self.journal is not None:
                try:
                    self.journal.append(call_id, call)
                except OSError as exc:  # e.g. a read-only directory beside the store: wait for commits instead
                    log.warning("LLM call journal in %s switched off (%s: %s); calls now wait for their audit "
                                "row's commit", self.journal.directory, type(exc).__name__, exc)
                    self._retired, self.journal = self.journal, None  # its rows still wait for their commit
            self._pending.append((call_id, call, done))
            if self._writer is None:
                self._writer = threading.Thread(target=self._drain, name="llm-audit-writer", daemon=True)
                self._writer.start()
        return done

    async def write(self, call: LLMCall) -> None:
        """Returns once the row cannot be lost to a kill: journaled, or else committed."""
        done = self.submit(call)
        if self.journal is None:  # none, or switched off by this very append
            await asyncio.wrap_future(done)

    def flush(self, timeout: float | None = None) -> None:
        """Block until every row submitted so far is written (shutdown, synchronous callers): the writer
        exits only once the queue is empty. Raises the error of a journaled row's failed commit."""
        with self._lock:
            writer = self._writer
        if writer is not None and writer is not threading.current_thread():
            writer.join(timeout)
        if self.error is not None:
            raise self.error

    def _take(self) -> list[tuple[str, LLMCall, Future[None]]]:
        with self._lock:
            batch, self._pending = self._pending[:self.max_batch], self._pending[self.max_batch:]
            if not batch:
                self._writer = None
                for journal in (self.journal, self._retired):
                    if journal is not None and self.error is None:
                        journal.discard()  # every row it holds is committed (appends take this lock)
                self._retired = None
            return batch

    def _drain(self) -> None:
        while batch := self._take():
            try:
                self.store.record_llm_calls([call for _, call, _ in batch], call_ids=[cid for cid, _, _ in batch])
            except BaseException as exc:  # noqa: BLE001 - handed to every waiting caller
                if self.error is None and (self.journal is not None or self._retired is not None):
                    self.error = exc
                for _, _, f in batch:
                    f.set_exception(exc)
            else:
                self.commits += 1
                self.rows += len(batch)
                for _, _, f in batch:
                    f.set_result(None)


def open_audit(store: Any) -> AuditLog | None:
    """The gateway's audit log: journaled when the store has a directory for a journal (beside a DuckDB
    file; under ENVSCALER_DATA_DIR for a server store). A killed run's journal is replayed into the store
    first, so its answered calls are in the cache before anything asks it."""
    from envscaler_core.config import envscaler_data_dir

    if store is None or not hasattr(store, "record_llm_calls"):
        return None
    directories = journal_dirs(store, envscaler_data_dir()) if hasattr(store, "known_call_ids") else []
    if not directories:
        return AuditLog(store)
    for directory in directories:
        replay_orphans(directory, store)
    owner = store.store_id() if hasattr(store, "store_id") else None
    return AuditLog(store, journal=CallJournal(directories[0], owner=owner))
