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


def test_text_that_looks_like_a_url_but_is_not_one_is_refused() -> None:
    with pytest.raises(StoreError, match="not a database URL"):
        Store.from_url("postgresql:/host/db")


def test_a_plain_path_is_a_duckdb_file(tmp_path: Path) -> None:
    path = tmp_path / "plain.duckdb"
    with Store.from_url(str(path)) as store:
        assert store.backend == "duckdb" and store.url == f"duckdb:///{path}"
    assert path.is_file()


def test_a_relative_plain_path_is_taken_from_the_current_directory(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with Store.from_url("runs.duckdb"):
        pass
    assert (tmp_path / "runs.duckdb").is_file()


def test_a_relative_path_in_a_url_is_refused_with_the_four_slash_spelling(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(StoreError) as caught:
        Store.from_url("duckdb:///nonexistent/dir/x.duckdb")
    assert "relative path" in str(caught.value) and "duckdb:////nonexistent/dir/x.duckdb" in str(caught.value)
    assert list(tmp_path.iterdir()) == []  # nothing created in the current directory


@pytest.mark.parametrize("create", [True, False])
def test_a_file_that_is_not_a_duckdb_database_is_refused_and_left_alone(tmp_path: Path, create: bool) -> None:
    tasks = tmp_path / "mytasks.jsonl"
    tasks.write_text('{"task": "Book a table"}\n')
    with pytest.raises(StoreError, match=r"mytasks.jsonl is not a DuckDB database file"):
        Store.from_url(f"duckdb:///{tasks}", create=create)
    assert tasks.read_text() == '{"task": "Book a table"}\n' and sorted(p.name for p in tmp_path.iterdir()) == ["mytasks.jsonl"]


def test_opening_a_store_held_in_this_process_keeps_its_lock(tmp_path: Path) -> None:
    """A second open in the process that holds the file must not read it (closing any descriptor of a file
    drops the process's POSIX locks, DuckDB's writer lock included)."""
    import subprocess
    import sys

    path = tmp_path / "held.duckdb"
    probe = f"from envscaler_core.store import Store\nStore.from_url({str(path)!r})"
    with Store.from_url(str(path)), Store.from_url(str(path)):
        other = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert other.returncode != 0 and "already open in another process" in other.stderr


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
    assert str(path) in message and "not a DuckDB database file" in message
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


def test_a_store_from_schema_1_gains_the_estimated_tokens_column_on_open(store_url: str) -> None:
    from envscaler_core.models import LLMCall

    with Store.from_url(store_url) as store, store.engine.begin() as conn:  # the llm_calls table as version 1 made it
        conn.execute(text("DROP TABLE llm_calls"))
        conn.execute(text(
            "CREATE TABLE llm_calls (call_id VARCHAR(32) PRIMARY KEY, fingerprint VARCHAR NOT NULL, run_id VARCHAR, "
            "stage VARCHAR NOT NULL, prompt_id VARCHAR, model VARCHAR NOT NULL, status VARCHAR NOT NULL, "
            "attempts INTEGER NOT NULL, repairs INTEGER NOT NULL, prompt_tokens INTEGER NOT NULL, "
            "completion_tokens INTEGER NOT NULL, cost_usd FLOAT NOT NULL, latency_ms FLOAT NOT NULL, error TEXT, "
            "response TEXT, created_at TIMESTAMP NOT NULL)"))
        conn.execute(text("CREATE INDEX ix_llm_calls_fingerprint ON llm_calls (fingerprint, status)"))
        conn.execute(text("INSERT INTO llm_calls (call_id, fingerprint, run_id, stage, model, status, attempts, repairs, "
                          "prompt_tokens, completion_tokens, cost_usd, latency_ms, created_at) VALUES ('old', 'f', 'r1', "
                          "'mine', 'm', 'ok', 1, 0, 5, 5, 0, 1, now())"))
        conn.execute(text("UPDATE store_meta SET value = '1' WHERE key = 'schema_version'"))
    with Store.from_url(store_url) as store:
        store.record_llm_call(LLMCall(fingerprint="g", run_id="r1", stage="mine", model="m", status="ok",
                                      prompt_tokens=3, completion_tokens=1, estimated_tokens=4))
        assert store.llm_usage("r1")["mine"] == {"calls": 2, "cached": 0, "retries": 0, "prompt_tokens": 8,
                                                 "cached_tokens": 0, "completion_tokens": 6, "estimated_tokens": 4,
                                                 "cost_usd": 0.0}
        with store.engine.connect() as conn:
            version = conn.execute(text("SELECT value FROM store_meta WHERE key = 'schema_version'")).scalar_one()
    assert version == str(SCHEMA_VERSION)


def test_a_store_from_schema_2_gains_the_cached_tokens_column_on_open(store_url: str) -> None:
    from envscaler_core.models import LLMCall

    with Store.from_url(store_url) as store, store.engine.begin() as conn:  # the llm_calls table as version 2 made it
        conn.execute(text("DROP TABLE llm_calls"))
        conn.execute(text(
            "CREATE TABLE llm_calls (call_id VARCHAR(32) PRIMARY KEY, fingerprint VARCHAR NOT NULL, run_id VARCHAR, "
            "stage VARCHAR NOT NULL, prompt_id VARCHAR, model VARCHAR NOT NULL, status VARCHAR NOT NULL, "
            "attempts INTEGER NOT NULL, repairs INTEGER NOT NULL, prompt_tokens INTEGER NOT NULL, "
            "completion_tokens INTEGER NOT NULL, estimated_tokens INTEGER DEFAULT 0, cost_usd FLOAT NOT NULL, "
            "latency_ms FLOAT NOT NULL, error TEXT, response TEXT, created_at TIMESTAMP NOT NULL)"))
        conn.execute(text("CREATE INDEX ix_llm_calls_fingerprint ON llm_calls (fingerprint, status)"))
        conn.execute(text("INSERT INTO llm_calls (call_id, fingerprint, run_id, stage, model, status, attempts, repairs, "
                          "prompt_tokens, completion_tokens, estimated_tokens, cost_usd, latency_ms, created_at) VALUES "
                          "('old', 'f', 'r1', 'mine', 'm', 'ok', 1, 0, 5, 5, 0, 0, 1, now())"))
        conn.execute(text("UPDATE store_meta SET value = '2' WHERE key = 'schema_version'"))
    with Store.from_url(store_url) as store:
        store.record_llm_call(LLMCall(fingerprint="g", run_id="r1", stage="mine", model="m", status="ok",
                                      prompt_tokens=2048, cached_tokens=1024, completion_tokens=1))
        usage = store.llm_usage("r1")["mine"]
    assert (usage["prompt_tokens"], usage["cached_tokens"]) == (2053, 1024)


def test_a_closed_store_refuses_work(store_url: str) -> None:
    store = Store.from_url(store_url)
    store.close()
    with pytest.raises(StoreError, match="closed"):
        store.fingerprints(SourceTask, "r1")


def test_a_store_from_schema_3_gains_the_cache_lookup_index_and_keeps_its_cache(store_url: str) -> None:
    from envscaler_core.models import LLMCall

    with Store.from_url(store_url) as store:
        store.record_llm_call(LLMCall(fingerprint="f", run_id="r1", stage="mine", model="m", status="ok",
                                      response={"answer": 1}))
        with store.engine.begin() as conn:  # as version 3 left it: no single-column cache index
            conn.execute(text("DROP INDEX ix_llm_calls_cache"))
            conn.execute(text("UPDATE store_meta SET value = '3' WHERE key = 'schema_version'"))
    with Store.from_url(store_url) as store:
        with store.engine.connect() as conn:
            version = conn.execute(text("SELECT value FROM store_meta WHERE key = 'schema_version'")).scalar_one()
        assert (version, store.cached_response("f")) == (str(SCHEMA_VERSION), {"answer": 1})
        with store.engine.begin() as conn:  # the index is there again: dropping it succeeds
            conn.execute(text("DROP INDEX ix_llm_calls_cache"))


def test_a_store_from_schema_4_keeps_serving_its_answers_to_every_run(store_url: str) -> None:
    """Version 5 marks answers of runs with the cache off as not shared; rows written before stay shared."""
    with Store.from_url(store_url) as store, store.engine.begin() as conn:  # the llm_calls table as version 4 made it
        conn.execute(text("DROP TABLE llm_calls"))
        conn.execute(text(
            "CREATE TABLE llm_calls (call_id VARCHAR(32) PRIMARY KEY, fingerprint VARCHAR NOT NULL, run_id VARCHAR, "
            "stage VARCHAR NOT NULL, prompt_id VARCHAR, model VARCHAR NOT NULL, status VARCHAR NOT NULL, "
            "attempts INTEGER NOT NULL, repairs INTEGER NOT NULL, prompt_tokens INTEGER NOT NULL, "
            "completion_tokens INTEGER NOT NULL, estimated_tokens INTEGER DEFAULT 0, cached_tokens INTEGER DEFAULT 0, "
            "cost_usd FLOAT NOT NULL, latency_ms FLOAT NOT NULL, error TEXT, response TEXT, "
            "created_at TIMESTAMP NOT NULL)"))
        conn.execute(text("CREATE INDEX ix_llm_calls_fingerprint ON llm_calls (fingerprint, status)"))
        conn.execute(text("CREATE INDEX ix_llm_calls_cache ON llm_calls (fingerprint)"))
        conn.execute(text("CREATE INDEX ix_llm_calls_run_stage ON llm_calls (run_id, stage)"))
        conn.execute(text("INSERT INTO llm_calls (call_id, fingerprint, run_id, stage, model, status, attempts, repairs, "
                          "prompt_tokens, completion_tokens, cost_usd, latency_ms, response, created_at) VALUES "
                          "('old', 'f', 'r1', 'mine', 'm', 'ok', 1, 0, 5, 5, 0, 1, '{\"answer\": 1}', now())"))
        conn.execute(text("UPDATE store_meta SET value = '4' WHERE key = 'schema_version'"))
    with Store.from_url(store_url) as store:
        with store.engine.connect() as conn:
            version = conn.execute(text("SELECT value FROM store_meta WHERE key = 'schema_version'")).scalar_one()
        assert (version, store.cached_response("f", asker="r2")) == (str(SCHEMA_VERSION), {"answer": 1})
