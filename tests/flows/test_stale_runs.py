"""Spec: which earlier flow runs a resumed run may mark Crashed. The store is compared as the DuckDB file
it names, however it was written (an outside check resumed with a plain path a run started with a
URL, and the killed flow run stayed Running); a server store marks nothing."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from uuid import uuid4

from flows.stale_runs import duckdb_file, is_stale


def _flow_run(store: str, run_id: str = "r1", flow_id: str = "f", **extra: object) -> SimpleNamespace:
    return SimpleNamespace(id=uuid4(), flow_id=flow_id, parameters={"run_id": run_id, "config": {"store": {"url": store}},
                                                                      **extra})


def test_a_plain_path_and_its_duckdb_url_are_one_store(tmp_path: Path) -> None:
    path = tmp_path / "s.duckdb"
    assert duckdb_file(str(path)) == duckdb_file(f"duckdb:///{path}") is not None


def test_an_earlier_flow_run_of_the_same_store_written_another_way_is_stale(tmp_path: Path) -> None:
    path = tmp_path / "s.duckdb"
    me, dead = _flow_run(f"duckdb:///{path}"), _flow_run(str(path))
    assert is_stale(dead, me, me.parameters)


def test_another_store_another_run_or_another_shard_is_left_alone(tmp_path: Path) -> None:
    me = _flow_run(str(tmp_path / "s.duckdb"))
    assert not is_stale(_flow_run(str(tmp_path / "other.duckdb")), me, me.parameters)
    assert not is_stale(_flow_run(str(tmp_path / "s.duckdb"), run_id="r2"), me, me.parameters)
    assert not is_stale(_flow_run(str(tmp_path / "s.duckdb"), flow_id="eval"), me, me.parameters)
    assert not is_stale(_flow_run(str(tmp_path / "s.duckdb"), shard_index=1, shard_count=2), me, me.parameters)


def test_a_server_store_marks_nothing() -> None:
    url = "postgresql+psycopg://u@localhost/envscaler"
    me = _flow_run(url)
    assert duckdb_file(url) is None and not is_stale(_flow_run(url), me, me.parameters)
