"""Opening a database for the store: engine options per backend, the schema, and the version guard.

All backend failures at open time are turned into one-line `StoreError`s here, because this is where
users meet them (a locked DuckDB file, a corrupted file, a Postgres server that is not running).
"""

from __future__ import annotations

import os
import re
import threading
import uuid
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy import Connection, Engine, create_engine, inspect, select, text
from sqlalchemy.exc import DBAPIError, SQLAlchemyError

from envscaler_core.store.errors import StoreError, StoreMissing
from envscaler_core.store.schema import MIGRATIONS, SCHEMA_VERSION, metadata, store_meta
from envscaler_core.store.urls import StoreURL

_PG_SCHEMA_LOCK = 0x656E7673  # arbitrary advisory-lock id: serialises concurrent first opens of one database
_LOCK_PID = re.compile(r"\(PID (\d+)\)")
_DUCKDB_MAGIC = b"DUCK"  # bytes 8-11 of every DuckDB database file

# DuckDB files this process has open (path -> open Stores). Closing ANY descriptor of a file drops every
# POSIX lock the process holds on it, DuckDB's writer lock included: a second open that peeked at the
# header of a file the process already holds would silently let another process open it. So the
# header is only read for files not open here.
_open_here: dict[Path, int] = {}
_open_here_lock = threading.Lock()


def first_line(exc: BaseException) -> str:
    """The backend's message without SQLAlchemy's SQL echo and background links."""
    inner = exc.orig if isinstance(exc, DBAPIError) and exc.orig is not None else exc
    lines = [line.strip() for line in str(inner).splitlines() if line.strip()]
    return lines[0] if lines else type(inner).__name__


def naive_utc(moment: datetime) -> datetime:
    """Timestamps are stored as naive UTC: the one representation both backends return unchanged."""
    return moment.astimezone(UTC).replace(tzinfo=None) if moment.tzinfo else moment


def open_engine(location: StoreURL, *, create: bool = True) -> Engine:
    """Create the engine, connect once (so lock/corruption/auth errors surface now) and set up the schema.
    With `create=False` (the read-only verbs) a DuckDB file that does not exist is `StoreMissing`, nothing
    is created, and an existing file is opened read-only: it can be read in a read-only directory or from
    a read-only file (an outside check's `status` failed there with "cannot create the DuckDB store")."""
    read_only = False
    if location.backend == "duckdb":
        assert location.path is not None
        if not create and not location.path.exists():
            raise StoreMissing(f"no store at {location.path}: nothing has run with it yet (start one with "
                               "`envscaler run` or `envscaler demo`, or point --db / ENVSCALER_DB_URL at your store)")
        _check_duckdb_file(location.path, create)
        with _open_here_lock:  # DuckDB refuses a second open of a file with another configuration in one process
            read_only = not create and not _open_here.get(location.path)
        if read_only:
            engine = create_engine(location.url, connect_args={"read_only": True})
        else:
            _make_parent(location)
            engine = create_engine(location.url)
    else:
        connect_args = {} if "connect_timeout" in location.url.query else {"connect_timeout": 10}
        engine = create_engine(location.url, pool_pre_ping=True, connect_args=connect_args)
    try:
        with engine.begin() as conn:
            _ensure_schema(conn, location, writable=not read_only)
    except _NeedsWriter:
        engine.dispose()
        assert location.path is not None
        if not _writable(location.path):
            raise
        return open_engine(location, create=True)  # an older store, where it may be written: migrated as before
    except StoreError:
        engine.dispose()
        raise
    except SQLAlchemyError as exc:
        engine.dispose()
        raise _open_error(location, exc) from exc
    if location.path is not None:
        with _open_here_lock:
            _open_here[location.path] = _open_here.get(location.path, 0) + 1
    return engine


def forget_duckdb(path: Path | None) -> None:
    """A Store of `path` was closed (see `_open_here`)."""
    if path is None:
        return
    with _open_here_lock:
        left = _open_here.get(path, 0) - 1
        if left > 0:
            _open_here[path] = left
        else:
            _open_here.pop(path, None)


def _check_duckdb_file(path: Path, create: bool) -> None:
    """An existing file must be a DuckDB database. DuckDB itself takes a small file of any content for a
    new database and would write its tables into it (a task file passed as --db by mistake); a read-only
    verb must not even create the schema in an empty one."""
    with _open_here_lock:
        if _open_here.get(path):
            return
    try:
        size = path.stat().st_size
    except OSError:
        return  # missing: created (or StoreMissing above); unreadable: DuckDB says why
    if size == 0:
        if create:
            return
        raise StoreError(f"{path} is an empty file, not a DuckDB store; point --db / ENVSCALER_DB_URL at your store")
    try:
        with open(path, "rb") as fh:
            head = fh.read(16)
    except OSError:
        return
    if head[8:12] != _DUCKDB_MAGIC:
        preview = head[:12].decode("utf-8", "replace").splitlines()[0] if head.strip() else "binary data"
        raise StoreError(f"{path} is not a DuckDB database file (it begins {preview!r}); point --db / ENVSCALER_DB_URL "
                         "at your store (a .duckdb file) or at a path that does not exist yet")


def release_dialect(engine: Engine) -> None:
    """Let a closed engine's dialect be freed. SQLAlchemy's PostgreSQL dialect (which duckdb_engine
    extends) memoises `_has_multi_table_query` with a class-level `lru_cache` keyed by the dialect, so
    every dialect ever used stays alive until interpreter teardown, and with it the result-processor
    memo keyed by DuckDB's native type objects; torn down after DuckDB's bindings, those are what the
    `nanobind: leaked instances` dump at exit lists. Dropping the memo and that cache entry frees them now."""
    from sqlalchemy.dialects.postgresql.base import PGDialect

    memos = getattr(engine.dialect, "__dict__", {}).get("_type_memos")
    if isinstance(memos, dict) or hasattr(memos, "clear"):
        memos.clear()
    cached = getattr(PGDialect, "_has_multi_table_query", None)
    if hasattr(cached, "cache_clear"):
        cached.cache_clear()


class _NeedsWriter(StoreError):
    """A store opened read-only whose schema must be made or migrated first."""


def _writable(path: Path) -> bool:
    return os.access(path.parent, os.W_OK) and os.access(path, os.W_OK)


def _make_parent(location: StoreURL) -> None:
    """A store opened for writing needs its directory writable (DuckDB writes its `.wal` beside the file)
    and, when it exists, the file itself; the error says which, and that reading it still works."""
    assert location.path is not None
    path = location.path
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        blocker = next((p for p in path.parents if p.exists() and not p.is_dir()), None)
        why = f"{blocker} is a file, not a directory" if blocker else (exc.strerror or str(exc))
        raise StoreError(f"cannot create the DuckDB store {path}: {why}; pass --db <writable file path> "
                         "or set ENVSCALER_DB_URL") from exc
    exists = path.exists()
    verb = "write to" if exists else "create"
    readable = "; read-only commands (status, report, export) can still read it" if exists else ""
    if not path.parent.is_dir() or not os.access(path.parent, os.W_OK):
        raise StoreError(f"cannot {verb} the DuckDB store {path}: directory {path.parent} is not writable "
                         f"(DuckDB keeps its write-ahead log beside the file){readable}; pass --db <writable file "
                         "path> or set ENVSCALER_DB_URL")
    if exists and not os.access(path, os.W_OK):
        raise StoreError(f"cannot write to the DuckDB store {path}: the file is read-only{readable}; pass --db "
                         "<writable file path> or set ENVSCALER_DB_URL")


def _open_error(location: StoreURL, exc: SQLAlchemyError) -> StoreError:
    message = first_line(exc)
    if location.backend == "duckdb":
        if "Could not set lock" in message or "Conflicting lock" in message:
            pid = _LOCK_PID.search(message)
            holder = f" (PID {pid.group(1)})" if pid else ""
            return StoreError(
                f"DuckDB store {location.path} is already open in another process{holder}: DuckDB allows one "
                "writer process per file; stop that process, or use a PostgreSQL store "
                "(ENVSCALER_DB_URL=postgresql+psycopg://...) for multi-process runs"
            )
        return StoreError(f"cannot open DuckDB store {location.path}: {message}")
    return StoreError(f"cannot open PostgreSQL store {location.display}: {message}")


STORE_ID = "store_id"


def _ensure_schema(conn: Connection, location: StoreURL, writable: bool = True) -> None:
    if location.backend == "postgres":
        conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _PG_SCHEMA_LOCK})
    found = _stored_version(conn)
    if not writable:  # a read-only open reads the schema it finds; making or migrating one takes a writer
        missing = sorted(set(metadata.tables) - set(inspect(conn).get_table_names()))
        if found != SCHEMA_VERSION or missing:
            what = f"has schema version {found}" if found != SCHEMA_VERSION else f"lacks the table(s) {', '.join(missing)}"
            newer = found is not None and found > SCHEMA_VERSION
            raise _NeedsWriter(f"store {location.display} {what}; this envscaler reads version {SCHEMA_VERSION}: "
                             + ("upgrade envscaler" if newer else "a command that writes (run, resume) brings it up "
                                "to date; a read-only command does not change it"))
        return
    if found is not None and found < SCHEMA_VERSION and all(v in MIGRATIONS for v in range(found, SCHEMA_VERSION)):
        for version in range(found, SCHEMA_VERSION):
            for statement in MIGRATIONS[version]:
                conn.execute(text(statement))
        conn.execute(store_meta.update().where(store_meta.c.key == "schema_version").values(value=str(SCHEMA_VERSION)))
        found = SCHEMA_VERSION
    if found is not None and found != SCHEMA_VERSION:
        relation = "newer" if found > SCHEMA_VERSION else "older"
        raise StoreError(
            f"store {location.display} has schema version {found}, written by a {relation} envscaler; this one "
            f"reads version {SCHEMA_VERSION} only ({'upgrade envscaler' if relation == 'newer' else 'no migration exists'}"
            " or point ENVSCALER_DB_URL at another database)"
        )
    metadata.create_all(conn, checkfirst=True)
    if found is None:
        conn.execute(store_meta.insert().values(key="schema_version", value=str(SCHEMA_VERSION)))
    if conn.execute(select(store_meta.c.value).where(store_meta.c.key == STORE_ID)).scalar_one_or_none() is None:
        # who the store is, whatever URL reaches it, and which journal files are its own (llm/journal.py);
        # on PostgreSQL under the schema lock above, so two first opens cannot both write one
        conn.execute(store_meta.insert().values(key=STORE_ID, value=uuid.uuid4().hex))


def _stored_version(conn: Connection) -> int | None:
    if not inspect(conn).has_table(store_meta.name):
        return None
    raw = conn.execute(select(store_meta.c.value).where(store_meta.c.key == "schema_version")).scalar_one_or_none()
    if raw is None:
        return None
    try:
        return int(raw)
    except ValueError as exc:
        raise StoreError(f"store_meta.schema_version is {raw!r}, not an integer: not an envscaler store?") from exc
