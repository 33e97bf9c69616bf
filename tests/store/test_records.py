"""Every record kind has a table and comes back from it exactly as it went in."""

from __future__ import annotations

import inspect

import pytest

import envscaler_core.models as models
from envscaler_core.models import EnvCandidate, Record, Scenario, SourceTask, ValidationRound
from envscaler_core.store import RECORD_KINDS, Store
from tests.store.samples import every_kind, source_task

SAMPLES = {type(record): record for record in every_kind()}


def test_every_record_model_has_a_table() -> None:
    record_models = {
        obj for obj in vars(models).values() if inspect.isclass(obj) and issubclass(obj, Record) and obj is not Record
    }
    assert record_models == set(RECORD_KINDS)
    assert record_models == set(SAMPLES)


@pytest.mark.parametrize("model", list(SAMPLES), ids=lambda m: m.__name__)
def test_a_record_round_trips(store: Store, model: type[Record]) -> None:
    record = SAMPLES[model]
    store.upsert([record], run_id="r1")
    assert store.get(model, record.fingerprint, "r1") == record


def test_get_of_an_unknown_fingerprint_is_none(store: Store) -> None:
    assert store.get(SourceTask, "0" * 64, "r1") is None


def test_get_in_another_run_is_none(store: Store) -> None:
    task = source_task(0)
    store.upsert([task], run_id="r1")
    assert store.get(SourceTask, task.fingerprint, "r2") is None


def test_query_filters_on_an_indexed_column(store: Store) -> None:
    candidate = SAMPLES[EnvCandidate]
    rejected = candidate.model_copy(update={"class_code": candidate.class_code + "# v2\n", "status": "rejected"})
    store.upsert([candidate, rejected], run_id="r1")
    assert store.query(EnvCandidate, "r1", where={"status": "rejected"}) == [rejected]


def test_query_with_a_list_matches_any_value(store: Store) -> None:
    tasks = [source_task(0, stateful=True), source_task(1, stateful=False), source_task(2)]
    store.upsert(tasks, run_id="r1")
    found = store.query(SourceTask, "r1", where={"stateful": [True, False]})
    assert {t.fingerprint for t in found} == {tasks[0].fingerprint, tasks[1].fingerprint}


def test_query_with_none_matches_null(store: Store) -> None:
    tasks = [source_task(0, stateful=True), source_task(1)]
    store.upsert(tasks, run_id="r1")
    assert store.query(SourceTask, "r1", where={"stateful": None}) == [tasks[1]]


def test_query_combines_filters(store: Store) -> None:
    scenario = SAMPLES[Scenario]
    other_env = scenario.model_copy(update={"env_id": "env_other"})
    store.upsert([scenario, other_env], run_id="r1")
    assert store.query(Scenario, "r1", where={"env_id": "env_other", "status": "verified"}) == [other_env]
    assert store.query(Scenario, "r1", where={"env_id": "env_other", "status": "rejected"}) == []


def test_query_without_run_id_spans_runs(store: Store) -> None:
    store.upsert([source_task(0)], run_id="r1")
    store.upsert([source_task(1)], run_id="r2")
    assert len(store.query(SourceTask)) == 2
    assert len(store.query(SourceTask, "r2")) == 1


def test_query_on_an_unindexed_field_names_the_allowed_columns(store: Store) -> None:
    with pytest.raises(ValueError, match=r"'reason'.*candidate_fp, mode, verdict"):
        store.query(ValidationRound, where={"reason": "x"})


def test_a_model_without_a_table_is_rejected(store: Store) -> None:
    class Stray(Record):
        name: str

    with pytest.raises(ValueError, match="no table for 'Stray'"):
        store.upsert([Stray(name="x")], run_id="r1")


def test_fingerprints_are_those_of_the_run(store: Store) -> None:
    tasks = [source_task(i) for i in range(3)]
    store.upsert(tasks, run_id="r1")
    store.upsert([source_task(9)], run_id="r2")
    assert store.fingerprints(SourceTask, "r1") == {t.fingerprint for t in tasks}
