"""Read one run's records a page at a time, so an export's memory does not grow with the run.

`Store.query` returns a whole list; for 50k scenarios that is every row's JSON plus every model at
once. This walks the same table with keyset pagination on the primary key `(run_id, fingerprint)`:
each page is `fingerprint > last ORDER BY fingerprint LIMIT n`, which the key index answers without
an OFFSET scan. It only reads, through `store.engine`, which CONTRACTS.md reserves for exactly this.
Order is by fingerprint (stable across backends and re-runs), not by insertion time.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, TypeVar

from sqlalchemy import select
from sqlalchemy.exc import SQLAlchemyError

from envscaler_core.models import Record
from envscaler_core.store import Store, StoreError
from envscaler_core.store.records import load_models, where_clauses
from envscaler_core.store.schema import kind_of

R = TypeVar("R", bound=Record)

DEFAULT_PAGE_SIZE = 1000


def iter_pages(
    store: Store,
    model_cls: type[R],
    run_id: str,
    where: Mapping[str, Any] | None = None,
    page_size: int = DEFAULT_PAGE_SIZE,
) -> Iterator[list[tuple[str, R]]]:
    """Pages of `(fingerprint, record)` of one kind in one run, ordered by fingerprint.

    `where` follows `Store.query` (indexed columns only). A row that no longer parses is a
    `StoreError` naming it, as in `Store.query`: an export never silently skips data.
    """
    if page_size < 1:
        raise ValueError(f"page_size must be >= 1, got {page_size}")
    if not run_id:
        raise ValueError("iter_pages needs a run_id: exports are per run")
    kind = kind_of(model_cls)
    table = kind.table
    clauses = where_clauses(kind, run_id, where)
    last: str | None = None
    while True:
        stmt = select(table.c.run_id, table.c.fingerprint, table.c.data).where(*clauses)
        if last is not None:
            stmt = stmt.where(table.c.fingerprint > last)
        stmt = stmt.order_by(table.c.fingerprint).limit(page_size)
        try:
            with store.engine.connect() as conn:
                rows = [tuple(row) for row in conn.execute(stmt)]
        except SQLAlchemyError as exc:
            raise StoreError(f"paged read of {table.name} for run {run_id!r} failed on {store.url}: {exc}") from exc
        if not rows:
            return
        models = load_models(kind, rows)
        yield [(str(row[1]), model) for row, model in zip(rows, models)]  # type: ignore[misc]
        if len(rows) < page_size:
            return
        last = str(rows[-1][1])


def iter_records(
    store: Store,
    model_cls: type[R],
    run_id: str,
    where: Mapping[str, Any] | None = None,
    page_size: int = DEFAULT_PAGE_SIZE,
) -> Iterator[tuple[str, R]]:
    """`(fingerprint, record)` one at a time; see `iter_pages`."""
    for page in iter_pages(store, model_cls, run_id, where, page_size):
        yield from page
