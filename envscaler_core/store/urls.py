"""Turning the configured database URL into something SQLAlchemy can open, or a clear error.

Only two backends are supported on purpose: a DuckDB file (one writer process, the default) and
PostgreSQL through psycopg 3 (several processes). Everything else is rejected before any connection
is attempted, so a typo in `ENVSCALER_DB_URL` fails with the URL in the message instead of a driver
traceback.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError

from envscaler_core.store.errors import StoreError

Backend = Literal["duckdb", "postgres"]

_POSTGRES_DRIVERS = {"postgresql", "postgres", "postgresql+psycopg"}


@dataclass(frozen=True)
class StoreURL:
    backend: Backend
    url: URL
    path: Path | None = None
    """The DuckDB file (absolute), None for Postgres."""

    @property
    def display(self) -> str:
        """The URL without its password, safe for error messages and logs."""
        return self.url.render_as_string(hide_password=True)


def parse_store_url(raw: str) -> StoreURL:
    """Validate and normalise `raw`; `postgresql://` and `postgres://` become `postgresql+psycopg://`."""
    text = raw.strip()
    if text.startswith("postgres://"):
        text = "postgresql://" + text[len("postgres://") :]
    try:
        url = make_url(text)
    except ArgumentError as exc:
        raise StoreError(f"store URL {raw!r} is not a database URL (expected duckdb:///path or postgresql://...)") from exc
    if url.drivername == "duckdb":
        return _duckdb(raw, url)
    if url.drivername in _POSTGRES_DRIVERS:
        if not url.database:
            raise StoreError(f"store URL {raw!r} names no database (expected postgresql://user@host:port/dbname)")
        return StoreURL("postgres", url.set(drivername="postgresql+psycopg"))
    raise StoreError(
        f"unsupported store URL scheme {url.drivername!r} in {raw!r}: use duckdb:///path.duckdb or postgresql+psycopg://..."
    )


def _duckdb(raw: str, url: URL) -> StoreURL:
    if not url.database or url.database == ":memory:":
        raise StoreError(
            f"store URL {raw!r} has no file path: the store must outlive the process (resume), use duckdb:///path.duckdb"
        )
    path = Path(url.database).expanduser().resolve()
    if path.is_dir():
        raise StoreError(f"DuckDB store path {path} is a directory, not a database file")
    return StoreURL("duckdb", url.set(database=str(path)), path)
