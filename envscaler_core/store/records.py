"""Batched, idempotent upsert of pipeline records and the reads that turn rows back into models.

An upsert is classify-then-write: one SELECT per chunk of fingerprints fetches the stored JSON, rows
whose JSON is identical are left alone ("unchanged", their `updated_at` untouched), and new plus
changed rows go out as multi-row `INSERT ... ON CONFLICT DO UPDATE` statements. The ON CONFLICT
keeps the write correct even if another process inserted the same key between our SELECT and INSERT
(Postgres with several workers); only the counts can then be off by that race.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pydantic import ValidationError
from sqlalchemy import ColumnElement, Connection, select
from sqlalchemy.dialects.postgresql import insert as pg_insert

from envscaler_core.models import Record, compact_json
from envscaler_core.store.errors import StoreError
from envscaler_core.store.schema import RecordKind, kind_of

LOOKUP_CHUNK = 1000
"""Fingerprints per SELECT ... IN (...)."""
WRITE_CHUNK = 1000
"""Rows per multi-row INSERT page (about 10 parameters each, far below Postgres' 65,535 limit)."""


@dataclass(frozen=True)
class UpsertCounts:
    """Outcome of one upsert, over distinct (kind, fingerprint) pairs in the call."""

    inserted: int = 0
    updated: int = 0
    unchanged: int = 0

    def __add__(self, other: UpsertCounts) -> UpsertCounts:
        return UpsertCounts(
            self.inserted + other.inserted, self.updated + other.updated, self.unchanged + other.unchanged
        )

    @property
    def total(self) -> int:
        return self.inserted + self.updated + self.unchanged


def _chunks(items: Sequence[Any], size: int) -> Iterator[Sequence[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def group_rows(records: Sequence[Record], run_id: str) -> dict[RecordKind, dict[str, dict[str, Any]]]:
    """Serialise and group records by kind before touching the database, so a bad record (not a
    Record, or a kind without a table) fails the call before anything is written. Within a kind, a
    later record with the same fingerprint replaces an earlier one."""
    if isinstance(records, Record) or not isinstance(records, Sequence):
        raise TypeError(f"upsert() takes a sequence of records, got {type(records).__name__}")
    groups: dict[RecordKind, dict[str, dict[str, Any]]] = {}
    for index, record in enumerate(records):
        if not isinstance(record, Record):
            raise TypeError(f"records[{index}] is a {type(record).__name__}, not a pipeline Record")
        kind = kind_of(type(record))
        row = {"run_id": run_id, "fingerprint": record.fingerprint}
        row.update({col: getattr(record, col) for col in kind.query_columns})
        row["data"] = compact_json(record.model_dump(mode="json"))
        groups.setdefault(kind, {})[row["fingerprint"]] = row
    return groups


def upsert_kind(
    conn: Connection, kind: RecordKind, run_id: str, rows: Mapping[str, dict[str, Any]], now: datetime
) -> UpsertCounts:
    table = kind.table
    stored: dict[str, str] = {}
    for chunk in _chunks(list(rows), LOOKUP_CHUNK):
        found = conn.execute(
            select(table.c.fingerprint, table.c.data).where(table.c.run_id == run_id, table.c.fingerprint.in_(chunk))
        )
        stored.update((fp, data) for fp, data in found)
    to_write = [row for fp, row in rows.items() if stored.get(fp) != row["data"]]
    inserted = sum(1 for row in to_write if row["fingerprint"] not in stored)
    updated = len(to_write) - inserted
    if to_write:
        stmt = pg_insert(table)
        stmt = stmt.on_conflict_do_update(
            index_elements=[table.c.run_id, table.c.fingerprint],
            set_={col: stmt.excluded[col] for col in (*kind.query_columns, "data", "updated_at")},
        ).returning(table.c.fingerprint)
        # executemany: SQLAlchemy's "insertmanyvalues" sends it as multi-row VALUES pages of
        # WRITE_CHUNK rows, compiling the one-row statement once instead of a 1,000-row one per page.
        conn.execution_options(insertmanyvalues_page_size=WRITE_CHUNK).execute(
            stmt, [{**row, "created_at": now, "updated_at": now} for row in to_write]
        )
    return UpsertCounts(inserted=inserted, updated=updated, unchanged=len(rows) - len(to_write))


def where_clauses(kind: RecordKind, run_id: str | None, where: Mapping[str, Any] | None) -> list[ColumnElement[bool]]:
    """`where` maps indexed column names (and `fingerprint`, the key) to a value (equality), None (IS NULL)
    or a list/tuple/set (IN)."""
    table = kind.table
    clauses: list[ColumnElement[bool]] = []
    if run_id is not None:
        clauses.append(table.c.run_id == run_id)
    for key, value in (where or {}).items():
        if key != "fingerprint" and key not in kind.query_columns:
            raise ValueError(
                f"cannot filter {kind.model.__name__} on {key!r}: where= keys must be indexed columns of "
                f"{table.name}: {', '.join(kind.query_columns)}"
            )
        column = table.c[key]
        if value is None:
            clauses.append(column.is_(None))
        elif isinstance(value, (list, tuple, set, frozenset)):
            clauses.append(column.in_(list(value)))
        else:
            clauses.append(column == value)
    return clauses


def load_models(kind: RecordKind, rows: Iterable[tuple[str, str, str]]) -> list[Record]:
    """Rows of (run_id, fingerprint, data) back into models; a row the current model rejects is an
    error naming the row, not a silently skipped record."""
    out: list[Record] = []
    for run_id, fingerprint, data in rows:
        try:
            out.append(kind.model.model_validate_json(data))
        except ValidationError as exc:
            raise StoreError(
                f"{kind.table.name} row (run {run_id!r}, fingerprint {fingerprint[:12]}) no longer parses as "
                f"{kind.model.__name__}: {exc.errors()[0]['msg']} at {exc.errors()[0]['loc']}"
            ) from exc
    return out
