"""Spec: paged reads return every record of the run exactly once, whatever the page size."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from envscaler_core.export import iter_pages, iter_records
from envscaler_core.models import Run, Scenario
from envscaler_core.store import Store
from tests.scenarios.helpers import LENT_B1, STATE


def _scenarios(n: int, status: str = "verified") -> list[Scenario]:
    return [Scenario(env_id="env_x", initial_state=STATE, task=f"task {i} {status}", checks=[LENT_B1], status=status)
            for i in range(n)]


@pytest.fixture
def filled(store_url: str) -> Iterator[Store]:
    """Both backends (the store component's `store_url`): keyset order must not depend on the engine."""
    with Store.from_url(store_url) as store:
        _fill(store)
        yield store


def _fill(store: Store) -> None:
    store.save_run(Run(run_id="a"))
    store.save_run(Run(run_id="b"))
    store.upsert([*_scenarios(5), *_scenarios(2, "rejected")], "a")
    store.upsert(_scenarios(3), "b")


@pytest.mark.parametrize("page_size", [1, 2, 5, 1000])
def test_every_record_once_in_fingerprint_order(filled: Store, page_size: int) -> None:
    got = list(iter_records(filled, Scenario, "a", page_size=page_size))
    fps = [fp for fp, _ in got]
    assert fps == sorted(fps) and len(fps) == 7
    assert {fp: s for fp, s in got} == {s.fingerprint: s for s in filled.query(Scenario, run_id="a")}


def test_where_filters_like_store_query(filled: Store) -> None:
    got = [s for _, s in iter_records(filled, Scenario, "a", where={"status": "verified"}, page_size=2)]
    assert sorted(s.task for s in got) == sorted(s.task for s in filled.query(Scenario, "a", {"status": "verified"}))


def test_pages_are_bounded_by_page_size(filled: Store) -> None:
    assert [len(p) for p in iter_pages(filled, Scenario, "a", page_size=3)] == [3, 3, 1]


def test_bad_arguments_are_refused(filled: Store) -> None:
    with pytest.raises(ValueError, match="page_size"):
        list(iter_records(filled, Scenario, "a", page_size=0))
    with pytest.raises(ValueError, match="indexed columns"):
        list(iter_records(filled, Scenario, "a", where={"task": "x"}))
