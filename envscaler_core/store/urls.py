"""Turning the configured database URL into something SQLAlchemy can open, or a clear error.

Only two backends are supported on purpose: a DuckDB file (one writer process, the default) and
PostgreSQL through psycopg 3 (several processes). Everything else is rejected before any connection
is attempted, so a typo in `ENVSCALER_DB_URL` fails with the URL in the message instead of a driver
traceback.

A DuckDB store may be given as a plain path (`/data/runs.duckdb`, `~/runs.duckdb`, `runs.duckdb`, the
last taken from the current directory) or as a URL with an absolute path (`duckdb:////data/runs.duckdb`,
four slashes). A URL with three slashes and a relative path (`duckdb:///data/runs.duckdb`) is refused:
SQLAlchemy reads it as `./data/runs.duckdb`, which is rarely what was meant, and a store that depends on
the directory a command starts from is not the one store every verb shares.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError

from envscaler_core.shell import shell_word
from envscaler_core.store.errors import StoreError

Backend = Literal["duckdb", "postgres"]

_POSTGRES_DRIVERS = {"postgresql", "postgres", "postgresql+psycopg"}
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


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

    def beside(self, suffix: str) -> Path | None:
        """`<file><suffix>` next to a DuckDB file (the run's progress, the LLM call journal); None for Postgres."""
        return self.path.with_name(self.path.name + suffix) if self.path is not None else None

    @property
    def human(self) -> str:
        """What people read and can paste back into --db: the file path of a DuckDB store, else `display`."""
        return str(self.path) if self.path is not None else self.display


def human_store(raw: str) -> str:
    """`raw` as people read it (a DuckDB store as its absolute file path), or unchanged when it does not parse."""
    try:
        return parse_store_url(raw).human
    except StoreError:
        return raw


def parse_store_url(raw: str) -> StoreURL:
    """Validate and normalise `raw`; `postgresql://` and `postgres://` become `postgresql+psycopg://`."""
    text = raw.strip()
    if text and "://" not in text and not _SCHEME.match(text):
        return _duckdb_file(raw, Path(text))
    if text.startswith("postgres://"):
        text = "postgresql://" + text[len("postgres://") :]
    try:
        url = make_url(text)
    except ArgumentError as exc:
        raise StoreError(f"store URL {raw!r} is not a database URL (expected a file path, duckdb:////absolute/path.duckdb or postgresql://user@host/db)") from exc
    if url.drivername == "duckdb":
        return _duckdb(raw, url)
    if url.drivername in _POSTGRES_DRIVERS:
        if not url.database:
            raise StoreError(f"store URL {raw!r} names no database (expected postgresql://user@host:port/dbname)")
        return StoreURL("postgres", url.set(drivername="postgresql+psycopg"))
    raise StoreError(
        f"unsupported store URL scheme {url.drivername!r} in {raw!r}: use a file path (or duckdb:////absolute/path.duckdb) or postgresql+psycopg://..."
    )


def _duckdb(raw: str, url: URL) -> StoreURL:
    if not url.database or url.database == ":memory:":
        raise StoreError(
            f"store URL {raw!r} has no file path: the store must outlive the process (resume); give a file, "
            "e.g. --db ~/runs.duckdb"
        )
    if not url.database.startswith(("/", "~")):
        raise StoreError(
            f"store URL {raw!r} names a relative path ({url.database}, under whatever directory a command starts "
            f"from); for an absolute path write four slashes ({shell_word('duckdb:////' + url.database)}) or pass a "
            f"plain path (--db {shell_word('/' + url.database)}, or --db {shell_word('./' + url.database)} if you do "
            "mean the current directory)"
        )
    return _duckdb_file(raw, Path(url.database), url)


def _duckdb_file(raw: str, given: Path, url: URL | None = None) -> StoreURL:
    path = given.expanduser().resolve()
    if path.is_dir():
        raise StoreError(f"DuckDB store path {path} is a directory, not a database file")
    base = url if url is not None else make_url("duckdb://")
    return StoreURL("duckdb", base.set(database=str(path)), path)
