"""Store write throughput on DuckDB: the batched upsert against one-row-per-transaction inserts.

Both sides write the same 10,000 small SourceTask rows (same serialisation, same table, fresh files)
in the same run, so the ratio is what to compare across machines:
- batched: `Store.upsert` of all records in one call (chunked multi-row statements, one transaction);
- naive: one `INSERT` of one row per transaction, the way a per-item writer would do it (a lower
  bound for per-item upserts, which would add a SELECT per row);
- re-upsert: the same batch again, all unchanged (what a resumed stage pays to skip done work).
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from sqlalchemy import insert

from envscaler_core.models import SourceTask, utcnow
from envscaler_core.store import Store
from envscaler_core.store.engine import naive_utc
from envscaler_core.store.records import group_rows

N = 10_000


def _records(n: int) -> list[SourceTask]:
    return [SourceTask(text=f"Book a table for {i % 9 + 1} at 19:{i % 60:02d}, request #{i}", dataset="bench", origin=f"bench.jsonl:#{i}") for i in range(n)]


def batched(path: Path, records: list[SourceTask]) -> tuple[float, float]:
    with Store.from_url(f"duckdb:///{path}") as store:
        t0 = time.perf_counter()
        counts = store.upsert(records, run_id="bench")
        first = time.perf_counter() - t0
        assert counts.inserted == len(records), counts
        t0 = time.perf_counter()
        counts = store.upsert(records, run_id="bench")
        again = time.perf_counter() - t0
        assert counts.unchanged == len(records), counts
    return first, again


def naive(path: Path, records: list[SourceTask]) -> float:
    with Store.from_url(f"duckdb:///{path}") as store:
        ((kind, rows),) = group_rows(records, "bench").items()
        now = naive_utc(utcnow())
        t0 = time.perf_counter()
        for row in rows.values():
            with store.engine.begin() as conn:
                conn.execute(insert(kind.table).values({**row, "created_at": now, "updated_at": now}))
        elapsed = time.perf_counter() - t0
        assert len(store.fingerprints(SourceTask, "bench")) == len(records)
    return elapsed


def main() -> None:
    records = _records(N)
    with tempfile.TemporaryDirectory(prefix="bench-store-") as tmp:
        first, again = batched(Path(tmp) / "batched.duckdb", records)
        slow = naive(Path(tmp) / "naive.duckdb", records)
    print(f"DuckDB, {N:,} SourceTask records (machine shared: expect noise, compare ratios)")
    print(f"  batched upsert (1 call)          : {N / first:>10,.0f} records/s  ({first:.2f} s)")
    print(f"  re-upsert, all unchanged         : {N / again:>10,.0f} records/s  ({again:.2f} s)")
    print(f"  naive, 1 row per transaction     : {N / slow:>10,.0f} records/s  ({slow:.2f} s)")
    print(f"  batched / naive                  : {slow / first:>10.1f}x")


if __name__ == "__main__":
    main()
