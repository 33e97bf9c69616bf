"""Which live process works on a run: one process per run, or one per shard of it.

Two `envscaler run --run-id X` on a PostgreSQL store used to both do the whole run and pay every LLM
call twice (an outside check: 718 calls where one run makes 361); on DuckDB the file's single-writer
lock already refuses the second process. On PostgreSQL a process working on a run holds a session
advisory lock on it for as long as it works, on a connection of its own: the server drops the lock
when the process ends or its host is lost, so a lock held is an owner alive, with no heartbeat to
judge. The connection's `application_name` names the owner (pid, host, shard), which is what a
refused second process is told.

Keys: (run key, 0) is the run itself, (run key, shard key) one shard. A whole run takes the run key
exclusively; a shard takes it shared plus its own shard key exclusively. So shards with distinct
indexes run side by side, while a second whole run, a whole run beside shards, or a shard index
taken twice are refused. A process that already holds a claim (the CLI, then the flow it runs in the
same process) takes it again without asking the server.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import socket
import threading
from collections.abc import Iterator
from typing import Any

from sqlalchemy import text

from envscaler_core.store.errors import StoreError

Shard = tuple[int, int]
WHOLE: Shard = (0, 1)


class RunHeld(StoreError):
    """Another live process works on this run (or on this shard of it)."""

    def __init__(self, message: str, owners: list[str]) -> None:
        super().__init__(message)
        self.owners = owners


_held: dict[tuple[str, str, Shard], int] = {}
_held_lock = threading.Lock()


def run_key(run_id: str) -> int:
    """A non-negative 31-bit key for the run (advisory locks take two int4 keys)."""
    return int(hashlib.sha256(f"envscaler-run:{run_id}".encode()).hexdigest()[:8], 16) & 0x7FFFFFFF


def shard_key(shard: Shard) -> int:
    index, count = shard
    return 0 if count <= 1 else count * 65536 + index + 1


def owner_label(shard: Shard = WHOLE) -> str:
    """What a refused process is told about this one: `envscaler pid N on HOST[, shard i of n]` (at most
    63 characters, PostgreSQL's limit for application_name; the host name is shortened first)."""
    tail = f", shard {shard[0]} of {shard[1]}" if shard[1] > 1 else ""
    head = f"envscaler pid {os.getpid()} on "
    return head + socket.gethostname()[:max(8, 63 - len(head) - len(tail))] + tail


def describe(shard: Shard) -> str:
    return "the whole run" if shard[1] <= 1 else f"shard {shard[0]} of {shard[1]}"


@contextlib.contextmanager
def claimed_run(store: Any, run_id: str, shard: Shard = WHOLE) -> Iterator[None]:
    """Hold the run (or one shard of it) while the block runs, or raise `RunHeld` naming its owner(s)."""
    key = (store.url, run_id, shard)
    with _held_lock:
        if _held.get(key):
            _held[key] += 1
            taken = None
        else:
            taken = _take(store, run_id, shard) if store.backend == "postgres" else _Nothing()
            _held[key] = 1
    try:
        yield
    finally:
        with _held_lock:
            _held[key] -= 1
            if _held[key] == 0:
                _held.pop(key)
                if taken is not None:
                    taken.close()


class _Nothing:
    """DuckDB: the open store's file lock is the claim (one writer process per file)."""

    def close(self) -> None:
        pass


def _take(store: Any, run_id: str, shard: Shard) -> Any:
    conn = store.engine.connect().execution_options(isolation_level="AUTOCOMMIT")
    try:
        conn.execute(text("SELECT set_config('application_name', :name, false)"), {"name": owner_label(shard)})
        first, second = run_key(run_id), shard_key(shard)
        if shard[1] <= 1:
            ok = conn.execute(text("SELECT pg_try_advisory_lock(:k, 0)"), {"k": first}).scalar_one()
        else:
            ok = conn.execute(text("SELECT pg_try_advisory_lock_shared(:k, 0)"), {"k": first}).scalar_one()
            if ok and not conn.execute(text("SELECT pg_try_advisory_lock(:k, :s)"), {"k": first, "s": second}).scalar_one():
                conn.execute(text("SELECT pg_advisory_unlock_shared(:k, 0)"), {"k": first})
                ok = False
        if not ok:
            owners = holders(conn, run_id)
            raise RunHeld(refusal(run_id, shard, owners), owners)
    except BaseException:
        _release(conn)
        raise
    return _Claim(conn)


class _Claim:
    def __init__(self, conn: Any) -> None:
        self.conn = conn

    def close(self) -> None:
        _release(self.conn)


def _release(conn: Any) -> None:
    """Session locks outlive a connection handed back to the pool: the connection is closed for good."""
    with contextlib.suppress(Exception):
        conn.invalidate()
    with contextlib.suppress(Exception):
        conn.close()


def holders(conn: Any, run_id: str, shards_only: bool = False) -> list[str]:
    """The owners (application_name) of the run's claims held by other sessions, whole run first."""
    rows = conn.execute(text(
        "SELECT DISTINCT l.objid, a.application_name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid "
        "WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2 AND l.classid = :k "
        "AND l.pid <> pg_backend_pid() ORDER BY l.objid"), {"k": run_key(run_id)}).all()
    return [name or "an unnamed session" for objid, name in rows if not shards_only or objid != 0]


def unclaimed(store: Any, run_id: str) -> bool:
    """No other process holds a claim on the run or any shard of it (PostgreSQL): a run recorded as
    running is then not running, whatever its row says (its processes ended without recording it, e.g.
    the server was lost under them). Always False on DuckDB, where the file lock tells instead."""
    if store.backend != "postgres":
        return False
    with store.engine.connect() as conn:
        return not holders(conn, run_id)


def live_shards(store: Any, run_id: str, mine: Shard) -> list[str]:
    """The other processes working on shards of the run right now (PostgreSQL; not this process's own
    claim of shard `mine`); always [] on DuckDB, whose file lock lets one process at a time at it."""
    if store.backend != "postgres":
        return []
    with store.engine.connect() as conn:
        found = holders(conn, run_id, shards_only=True)
    return [name for name in found if name != owner_label(mine)]


def refusal(run_id: str, shard: Shard, owners: list[str]) -> str:
    who = "; ".join(dict.fromkeys(owners)) or "another process"
    return (f"run {run_id} is already being worked on ({who}), so {describe(shard)} cannot start: one process "
            "works on a run at a time, else both would pay for every LLM call. Wait for it to end or stop it; to "
            "split a run over processes, run its stages after mining as shards, one process per shard_index "
            "(the `shard` deployment, shard_index 0..N-1 of shard_count N; docs/operations.md, \"Sharding one run "
            "across workers\")")
