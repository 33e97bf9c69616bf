"""Spec: streamed stages hand each item on as soon as its own batch is done, take every item exactly
once, finish lanes in order, and stop everything on the first batch error.

The lanes here are plain coroutines over an in-memory "store" (no Prefect, no sandbox): the scheduler
is what is under test; tests/flows/test_factory.py runs it through the real flow."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest

from envscaler_core.pipeline import BatchReport
from envscaler_core.pipeline.streaming import Lane, Stream, batch_size_for


class Chain:
    """Three lanes a -> b -> c over an in-memory store: lane b's item `x` exists once lane a did `x`."""

    def __init__(self, items: list[str], delays: dict[str, float] | None = None) -> None:
        self.items, self.delays = items, delays or {}
        self.done: dict[str, list[str]] = {"a": [], "b": [], "c": []}
        self.events: list[tuple[str, str, str]] = []  # (lane, item, "start" | "end")
        self.batches: dict[str, list[list[str]]] = {"a": [], "b": [], "c": []}

    def pending(self, lane: str):
        upstream_of = {"a": None, "b": "a", "c": "b"}[lane]

        def pending(upstream: Sequence[str] | None) -> list[str]:
            made = self.items if upstream_of is None else self.done[upstream_of]
            pool = made if upstream is None else [i for i in made if i in upstream]
            return [i for i in pool if i not in self.done[lane]]

        return pending

    def runner(self, lane: str):
        async def run(items: list[str]) -> BatchReport:
            self.batches[lane].append(list(items))
            for item in items:
                self.events.append((lane, item, "start"))
            await asyncio.sleep(max(self.delays.get(f"{lane}:{i}", 0.01) for i in items))
            for item in items:
                self.done[lane].append(item)
                self.events.append((lane, item, "end"))
            return BatchReport(stage=lane, done=len(items))

        return run

    def lanes(self) -> list[Lane]:
        return [Lane(name, self.pending(name), self.runner(name)) for name in ("a", "b", "c")]


class Recorder:
    def __init__(self) -> None:
        self.added: dict[str, int] = {}
        self.finished: list[str] = []
        self.done: dict[str, int] = {}

    def items_added(self, name: str, count: int) -> None:
        self.added[name] = self.added.get(name, 0) + count

    def batch_done(self, done: int, failed: int, step_name: str | None = None) -> None:
        assert step_name is not None
        self.done[step_name] = self.done.get(step_name, 0) + done

    def step_finished(self, name: str | None = None) -> None:
        assert name is not None
        self.finished.append(name)


def test_an_item_moves_on_while_a_slower_sibling_is_still_in_the_previous_stage() -> None:
    chain = Chain(["fast", "slow"], delays={"a:slow": 0.3})
    asyncio.run(Stream(chain.lanes(), batch_size=10, in_flight=8).run())
    order = chain.events
    assert order.index(("c", "fast", "end")) < order.index(("a", "slow", "end"))


def test_every_item_goes_through_every_lane_exactly_once() -> None:
    items = [f"i{n}" for n in range(23)]
    chain = Chain(items, delays={f"a:i{n}": 0.001 * (n % 5) for n in range(23)})
    reports = asyncio.run(Stream(chain.lanes(), batch_size=4, in_flight=3).run())
    for lane in ("a", "b", "c"):
        assert sorted(chain.done[lane]) == sorted(items)
        assert sum(r.done for r in reports[lane]) == len(items)
    assert max(len(b) for b in chain.batches["a"]) <= 4  # never above batch_size


def test_an_idle_lane_cuts_work_over_its_free_slots_and_a_busy_one_takes_full_batches() -> None:
    assert batch_size_for(6, batch_size=25, free_slots=8) == 1
    assert batch_size_for(20, batch_size=25, free_slots=8) == 3
    assert batch_size_for(1000, batch_size=25, free_slots=8) == 25
    assert batch_size_for(10, batch_size=25, free_slots=0) == 10  # every slot busy: one batch waits its turn
    assert batch_size_for(0, batch_size=25, free_slots=8) == 1


def test_lanes_finish_in_order_and_report_their_items() -> None:
    chain = Chain(["x", "y", "z"], delays={"b:y": 0.1})
    progress = Recorder()
    asyncio.run(Stream(chain.lanes(), batch_size=10, in_flight=8, progress=progress).run())
    assert progress.finished == ["a", "b", "c"]
    assert progress.added == {"a": 3, "b": 3, "c": 3} and progress.done == {"a": 3, "b": 3, "c": 3}


def test_items_already_pending_downstream_start_at_once_like_a_resumed_run() -> None:
    """A resumed run: lane b has work left from before (item `old`), lane a has new work."""
    chain = Chain(["new"], delays={"a:new": 0.2})
    chain.done["a"].append("old")
    asyncio.run(Stream(chain.lanes(), batch_size=10, in_flight=8).run())
    assert chain.events.index(("c", "old", "end")) < chain.events.index(("a", "new", "end"))
    assert sorted(chain.done["c"]) == ["new", "old"]


def test_prepare_runs_before_each_look_and_knows_what_the_lane_already_took() -> None:
    chain = Chain(["p", "q"], delays={"a:q": 0.1})
    seen: list[frozenset[str]] = []
    lanes = chain.lanes()
    lanes[1] = Lane("b", chain.pending("b"), chain.runner("b"), prepare=seen.append)
    asyncio.run(Stream(lanes, batch_size=10, in_flight=8).run())
    assert seen[0] == frozenset()  # the first, whole-run look
    assert seen[-1] == frozenset({"p"})  # when q arrives, p is already taken


def test_the_first_batch_error_stops_the_stream_and_is_raised() -> None:
    chain = Chain(["ok", "bad", "slow"], delays={"a:slow": 5.0})
    lanes = chain.lanes()
    run_b = chain.runner("b")

    async def failing(items: list[str]) -> BatchReport:
        if "bad" in items:
            raise ConnectionError("endpoint down")
        return await run_b(items)

    lanes[1] = Lane("b", chain.pending("b"), failing)

    async def main() -> float:
        loop = asyncio.get_running_loop()
        started = loop.time()
        with pytest.raises(ConnectionError, match="endpoint down"):
            await Stream(lanes, batch_size=10, in_flight=8).run()
        return loop.time() - started

    assert asyncio.run(main()) < 2.0  # the 5 s batch was cancelled, not waited for
    assert "slow" not in chain.done["a"]


def test_nothing_pending_anywhere_finishes_at_once() -> None:
    chain = Chain([])
    progress = Recorder()
    reports = asyncio.run(Stream(chain.lanes(), batch_size=10, in_flight=8, progress=progress).run())
    assert reports == {"a": [], "b": [], "c": []} and progress.finished == ["a", "b", "c"]


def test_a_stream_needs_lanes() -> None:
    with pytest.raises(ValueError, match="at least one lane"):
        Stream([], batch_size=1, in_flight=1)


def test_a_store_error_on_a_lanes_first_look_stops_the_batches_already_started() -> None:
    chain = Chain(["slow"], delays={"a:slow": 5.0})
    lanes = chain.lanes()

    def broken(upstream: Sequence[str] | None) -> list[str]:
        raise OSError("store unreachable")

    lanes[2] = Lane("c", broken, chain.runner("c"))

    async def main() -> None:
        with pytest.raises(OSError, match="store unreachable"):
            await Stream(lanes, batch_size=10, in_flight=8).run()
        assert all(t.done() for t in asyncio.all_tasks() if t is not asyncio.current_task())

    asyncio.run(main())
    assert chain.done["a"] == []
