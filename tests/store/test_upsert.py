"""Upsert is idempotent, batched and all-or-nothing, on both backends."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import event, text

from envscaler_core.models import EnvTopic, Run, Scenario, SourceTask
from envscaler_core.store import Store, StoreError, UpsertCounts
from tests.store.samples import every_kind, source_task


def test_new_records_are_inserted(store: Store) -> None:
    counts = store.upsert([source_task(i) for i in range(3)], run_id="r1")
    assert counts == UpsertCounts(inserted=3, updated=0, unchanged=0)
    assert len(store.fingerprints(SourceTask, "r1")) == 3


def test_repeating_an_upsert_is_a_no_op(store: Store) -> None:
    tasks = [source_task(i) for i in range(3)]
    store.upsert(tasks, run_id="r1")
    assert store.upsert(tasks, run_id="r1") == UpsertCounts(inserted=0, updated=0, unchanged=3)


def test_changed_bookkeeping_field_is_an_update_of_the_same_key(store: Store) -> None:
    task = source_task(0)
    store.upsert([task], run_id="r1")
    judged = task.model_copy(update={"stateful": False, "judge_reason": "read-only"})
    assert judged.fingerprint == task.fingerprint
    assert store.upsert([judged], run_id="r1") == UpsertCounts(inserted=0, updated=1, unchanged=0)
    assert store.get(SourceTask, task.fingerprint, "r1") == judged


def test_unchanged_rows_are_not_rewritten(store: Store) -> None:
    task = source_task(0)
    store.upsert([task], run_id="r1")
    stamp = "SELECT updated_at FROM source_tasks"
    with store.engine.connect() as conn:
        before = conn.execute(text(stamp)).scalar_one()
    store.upsert([task], run_id="r1")
    with store.engine.connect() as conn:
        assert conn.execute(text(stamp)).scalar_one() == before


def test_the_same_record_in_another_run_is_a_separate_row(store: Store) -> None:
    task = source_task(0)
    store.upsert([task], run_id="r1")
    assert store.upsert([task], run_id="r2") == UpsertCounts(inserted=1, updated=0, unchanged=0)
    assert len(store.query(SourceTask)) == 2


def test_kinds_can_be_mixed_in_one_call(store: Store) -> None:
    records = every_kind()
    assert store.upsert(records, run_id="r1").inserted == len(records)
    assert store.upsert(records, run_id="r1").unchanged == len(records)


def test_a_fingerprint_repeated_in_one_call_counts_once_and_the_last_wins(store: Store) -> None:
    first = source_task(0, stateful=None)
    last = source_task(0, stateful=True)
    assert store.upsert([first, last], run_id="r1") == UpsertCounts(inserted=1, updated=0, unchanged=0)
    assert store.get(SourceTask, first.fingerprint, "r1") == last


def test_a_thousand_records_take_a_handful_of_statements(store: Store) -> None:
    statements: list[str] = []

    def count(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        statements.append(statement)

    event.listen(store.engine, "before_cursor_execute", count)
    try:
        store.upsert([source_task(i) for i in range(1000)], run_id="r1")
    finally:
        event.remove(store.engine, "before_cursor_execute", count)
    assert len(store.fingerprints(SourceTask, "r1")) == 1000
    assert len(statements) <= 5, statements[:10]


def test_a_non_record_is_rejected_before_anything_is_written(store: Store) -> None:
    with pytest.raises(TypeError, match=r"records\[1\] is a Run"):
        store.upsert([source_task(0), Run(run_id="r1")], run_id="r1")  # type: ignore[list-item]
    assert store.fingerprints(SourceTask, "r1") == set()


def test_an_empty_run_id_is_rejected(store: Store) -> None:
    with pytest.raises(ValueError, match="run_id"):
        store.upsert([source_task(0)], run_id="")


def test_a_batch_that_fails_midway_leaves_nothing_behind(store: Store) -> None:
    """Source tasks are written first; the scenarios table is gone, so the second half of the same
    transaction fails after the first half was sent, and the first half must be rolled back."""
    with store.engine.begin() as conn:
        conn.execute(text("DROP TABLE scenarios"))
    records = [source_task(i) for i in range(5)] + [r for r in every_kind() if isinstance(r, Scenario)]
    with pytest.raises(StoreError, match="rolled back"):
        store.upsert(records, run_id="r1")
    assert store.fingerprints(SourceTask, "r1") == set()


def test_an_update_that_fails_midway_keeps_the_old_content(store: Store) -> None:
    topic = next(r for r in every_kind() if isinstance(r, EnvTopic))
    store.upsert([topic], run_id="r1")
    with store.engine.begin() as conn:
        conn.execute(text("DROP TABLE scenarios"))
    dropped = topic.model_copy(update={"selected": False, "drop_reason": "duplicate"})
    scenario = next(r for r in every_kind() if isinstance(r, Scenario))
    with pytest.raises(StoreError):
        store.upsert([dropped, scenario], run_id="r1")
    assert store.get(EnvTopic, topic.fingerprint, "r1") == topic
