"""Streamed stages: an item moves to the next stage as soon as its own batch is done.

In a staged run every stage waits for the slowest item of the one before it (the last candidate's
validation holds back every env's scenarios). Streamed, synth -> validate -> scen -> rollout form one
pipeline of lanes: when a batch of a lane finishes, the next lane asks the store what that batch made
pending (`Lane.pending(upstream)`, narrowed to the batch's items, so a run of n items does O(n) work
in these queries, not O(n^2)) and starts batches for it at once. The store stays the only
hand-over, so a streamed run resumes exactly like a staged one: the first look at each lane is the
whole-run pending list.

Batches are smaller than in a staged run when there is little work: a lane cuts what it was handed
into as many batches as it has free slots (`in_flight` minus the batches it is running; never more
than `batch_size` items each), so six items are six batches that move on one by one, while a busy lane
of a large run takes new work in full batches.

Nothing here imports Prefect: the flow passes its Prefect tasks in as `Lane.run`.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from envscaler_core.pipeline.stages import BatchReport

Pending = Callable[[Sequence[str] | None], list[str]]
"""Item fingerprints pending in a lane: all of the run's (None) or only those made by these upstream items."""


@dataclass(frozen=True)
class Lane:
    name: str
    pending: Pending
    run: Callable[[list[str]], Awaitable[BatchReport]]
    prepare: Callable[[frozenset[str]], object] | None = None
    """Called before each look at `pending`, with the items this lane already took (validation's dedup:
    a candidate being validated is the keeper of its code)."""


class Progress(Protocol):
    """What a stream reports as it goes (`ProgressTracker` is one, after `steps_started(lane names)`)."""

    def items_added(self, name: str, count: int) -> None: ...

    def batch_done(self, done: int, failed: int, step_name: str | None = None) -> None: ...

    def step_finished(self, name: str | None = None) -> None: ...


class _Silent:
    def items_added(self, name: str, count: int) -> None:
        pass

    def batch_done(self, done: int, failed: int, step_name: str | None = None) -> None:
        pass

    def step_finished(self, name: str | None = None) -> None:
        pass


@dataclass
class _LaneState:
    taken: set[str] = field(default_factory=set)
    reports: list[BatchReport] = field(default_factory=list)
    running: int = 0
    finished: bool = False
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)


def batch_size_for(count: int, batch_size: int, free_slots: int) -> int:
    """Items per batch: small enough that the lane's free batch slots share the work, never above
    `batch_size`. A busy lane takes new work in full batches: cut finer, a large run's items would reach
    the last stage one per Prefect task (measured: 4.4 task runs per env at 10x the demo)."""
    return max(1, min(batch_size, math.ceil(count / max(1, free_slots))))


class Stream:
    def __init__(self, lanes: Sequence[Lane], *, batch_size: int, in_flight: int,
                 progress: Progress | None = None) -> None:
        if not lanes:
            raise ValueError("a stream needs at least one lane")
        self.lanes = list(lanes)
        self.batch_size, self.in_flight = batch_size, in_flight
        self.progress: Progress = progress or _Silent()
        self._state = {lane.name: _LaneState() for lane in self.lanes}
        self._limits = {lane.name: asyncio.Semaphore(in_flight) for lane in self.lanes}
        self._tasks: set[asyncio.Task[None]] = set()
        self._failure: BaseException | None = None
        self._idle = asyncio.Event()
        self._fed = False  # idle means nothing until every lane had its first look
        self.finished_at: dict[str, float] = {}

    async def run(self) -> dict[str, list[BatchReport]]:
        """Every lane's reports; the first batch error (an infrastructure fault after its retries, a
        budget stop) cancels the batches still running and is raised."""
        try:
            for index in range(len(self.lanes)):
                await self._feed(index, None)  # a store error here still stops what already started
            self._fed = True
            self._check_idle()
            await self._idle.wait()
        finally:
            for task in list(self._tasks):
                task.cancel()
            if self._tasks:
                await asyncio.gather(*self._tasks, return_exceptions=True)
        if self._failure is not None:
            raise self._failure
        return {name: state.reports for name, state in self._state.items()}

    async def _feed(self, index: int, upstream: Sequence[str] | None) -> None:
        """Start batches for what lane `index` has pending (after `upstream` items of the lane before)."""
        lane = self.lanes[index]
        state = self._state[lane.name]
        async with state.lock:  # two upstream batches finishing at once must not both take an item
            if lane.prepare is not None:
                lane.prepare(frozenset(state.taken))
            todo = [fp for fp in lane.pending(upstream) if fp not in state.taken]
            state.taken.update(todo)
        if not todo:
            return
        self.progress.items_added(lane.name, len(todo))
        size = batch_size_for(len(todo), self.batch_size, self.in_flight - state.running)
        for start in range(0, len(todo), size):
            state.running += 1
            task = asyncio.create_task(self._batch(index, todo[start:start + size]))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _batch(self, index: int, items: list[str]) -> None:
        lane = self.lanes[index]
        state = self._state[lane.name]
        try:
            async with self._limits[lane.name]:
                report = await lane.run(items)
            state.reports.append(report)
            self.progress.batch_done(report.done, report.failed, step_name=lane.name)
            if index + 1 < len(self.lanes):
                await self._feed(index + 1, items)
        except asyncio.CancelledError:
            raise
        except BaseException as exc:  # noqa: BLE001 - kept and raised by run(), after the others stop
            if self._failure is None:
                self._failure = exc
            self._idle.set()
        finally:
            state.running -= 1
            self._check_idle()

    def _check_idle(self) -> None:
        """Done when no batch runs and none can start: lanes finish in order, as their upstream empties."""
        if not self._fed:
            return
        for index, lane in enumerate(self.lanes):
            state = self._state[lane.name]
            upstream_busy = any(self._state[up.name].running for up in self.lanes[:index])
            if not state.running and not upstream_busy and not state.finished:
                state.finished = True
                self.finished_at[lane.name] = time.perf_counter()
                self.progress.step_finished(lane.name)
        if not any(state.running for state in self._state.values()):
            self._idle.set()
