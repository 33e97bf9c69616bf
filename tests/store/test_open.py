"""Opening a store: URL handling, schema creation and the errors users meet first."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import text

from envscaler_core.models import SourceTask
from envscaler_core.store import SCHEMA_VERSION, Store, StoreError
from tests.store.samples import source_task


def test_reopening_keeps_the_data_and_the_schema(store_url: str) -> None:
    with Store.from_url(store_url) as store:
        store.upsert([source_task(0)], run_id="r1")
    with Store.from_url(store_url) as store:
        assert len(store.fingerprints(SourceTask, "r1")) == 1


def test_a_missing_parent_directory_is_created(tmp_path: Path) -> None:
    path = tmp_path / "runs" / "a" / "store.duckdb"
    with Store.from_url(f"duckdb:///{path}"):
        pass
    assert path.is_file()


@pytest.mark.postgres
def test_plain_postgresql_urls_are_normalised_to_psycopg(postgres_url: str) -> None:
    plain = postgres_url.replace("postgresql+psycopg://", "postgresql://")
    with Store.from_url(plain) as store:
        assert store.backend == "postgres"
        assert store.url.startswith("postgresql+psycopg://")


def test_an_unknown_scheme_is_refused(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match=r"unsupported store URL scheme 'sqlite'"):
        Store.from_url(f"sqlite:///{tmp_path / 'x.db'}")


def test_text_that_is_not_a_url_is_refused() -> None:
    with pytest.raises(StoreError, match="not a database URL"):
        Store.from_url("envscaler.duckdb")


def test_an_in_memory_duckdb_is_refused() -> None:
    with pytest.raises(StoreError, match="no file path"):
        Store.from_url("duckdb:///:memory:")


def test_a_directory_is_refused(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match=rf"{tmp_path} is a directory"):
        Store.from_url(f"duckdb:///{tmp_path}")


def test_a_corrupted_duckdb_file_is_refused_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "broken.duckdb"
    path.write_bytes(b"this is not a database" * 500)
    with pytest.raises(StoreError) as caught:
        Store.from_url(f"duckdb:///{path}")
    message = str(caught.value)
    assert str(path) in message and "not a valid DuckDB database" in message
    assert "\n" not in message


@pytest.mark.postgres
def test_an_unreachable_postgres_server_is_reported(postgres_url: str) -> None:
    wrong_db = postgres_url.rsplit("/", 1)[0] + "/no_such_database"
    with pytest.raises(StoreError, match=r"cannot open PostgreSQL store .*no_such_database"):
        Store.from_url(wrong_db)


def test_a_store_from_a_newer_schema_is_refused(store_url: str) -> None:
    with Store.from_url(store_url) as store, store.engine.begin() as conn:
        conn.execute(text("UPDATE store_meta SET value = :v WHERE key = 'schema_version'"), {"v": str(SCHEMA_VERSION + 1)})
    with pytest.raises(StoreError, match=rf"schema version {SCHEMA_VERSION + 1}, written by a newer envscaler"):
        Store.from_url(store_url)


def test_a_closed_store_refuses_work(store_url: str) -> None:
    store = Store.from_url(store_url)
    store.close()
    with pytest.raises(StoreError, match="closed"):
        store.fingerprints(SourceTask, "r1")
