"""One Store shared by worker threads; one writer process per DuckDB file."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from envscaler_core.models import SourceTask
from envscaler_core.store import Store, UpsertCounts
from tests.store.samples import source_task

OPEN_IN_CHILD = textwrap.dedent(
    """
    import sys
    from envscaler_core.store import Store, StoreError
    try:
        Store.from_url(sys.argv[1]).close()
    except StoreError as exc:
        print(exc)
        sys.exit(3)
    print("opened")
    """
)


def _open_in_other_process(url: str) -> subprocess.CompletedProcess[str]:
    root = Path(__file__).resolve().parents[2]
    return subprocess.run(
        [sys.executable, "-c", OPEN_IN_CHILD, url], capture_output=True, text=True, timeout=120, cwd=root
    )


def test_eight_threads_upserting_overlapping_batches(store: Store) -> None:
    shared = [source_task(i) for i in range(40)]

    def work(worker: int) -> tuple[UpsertCounts, int]:
        counts = UpsertCounts()
        for batch in range(3):
            own = [source_task(1000 * (worker + 1) + 100 * batch + i) for i in range(30)]
            counts += store.upsert(own + shared, run_id="r1")
        seen = len(store.query(SourceTask, "r1"))  # reads interleave with other threads' writes
        return counts, seen

    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(work, range(8)))
    total = sum((counts for counts, _ in results), UpsertCounts())
    distinct = 8 * 3 * 30 + len(shared)
    assert total.inserted == distinct
    assert total.updated == 0
    assert total.total == 8 * 3 * 70
    assert len(store.fingerprints(SourceTask, "r1")) == distinct
    assert all(seen >= 30 * 3 + len(shared) for _, seen in results)


def test_a_second_process_cannot_open_an_open_duckdb_file(duckdb_url: str) -> None:
    with Store.from_url(duckdb_url) as store:
        assert store.backend == "duckdb"
        done = _open_in_other_process(duckdb_url)
    assert done.returncode == 3, done.stderr[-2000:]
    message = done.stdout.strip()
    assert len(message.splitlines()) == 1
    assert duckdb_url.removeprefix("duckdb:///") in message
    assert "another process" in message and "PostgreSQL" in message


def test_closing_releases_the_duckdb_file_for_another_process(duckdb_url: str) -> None:
    Store.from_url(duckdb_url).close()
    done = _open_in_other_process(duckdb_url)
    assert (done.returncode, done.stdout.strip()) == (0, "opened"), done.stderr[-2000:]


@pytest.mark.postgres
def test_postgres_serves_two_processes_at_once(postgres_url: str) -> None:
    with Store.from_url(postgres_url) as store:
        store.upsert([source_task(0)], run_id="r1")
        done = _open_in_other_process(postgres_url)
    assert (done.returncode, done.stdout.strip()) == (0, "opened"), done.stderr[-2000:]
