"""A kill-proof journal of answered LLM calls, so a call need not wait for its database commit.

Every answered call's audit row is also the persistent response cache: a run killed after the call
returned must find it on resume, or it pays for the call again. Waiting for the store's commit before
returning kept that promise at a price: the commit (7 ms median, 67 ms at the 90th percentile with
other commits queued, measured during bench_pipeline on 2 cores) sat between every model call and the
next one of the same chain, and a validation chain is 20 calls deep. One `write()` of the row to a file
keeps the promise against a kill instead (the kernel holds the bytes once the call returns; a power cut
can lose the rows of the last commit window, which the store's own commit would have kept), and the
store catches up on its writer thread.

One journal file per gateway process, locked (`flock`) while that process lives. The next gateway on
the same store replays the files whose owner is gone (rows the store already has are skipped by their
call id), then deletes them; a clean close deletes its own once every row is committed.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import logging
import os
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

from pydantic import ValidationError

from envscaler_core.models.llm import LLMCall

log = logging.getLogger(__name__)

ROTATE_BYTES = 64 * 1024 * 1024


class JournalError(RuntimeError):
    """A journal left by a killed run cannot be read back; the file is kept for a person to look at."""


class ReplayStore(Protocol):
    def record_llm_calls(self, calls: Sequence[LLMCall], call_ids: Sequence[str] | None = None) -> None: ...

    def known_call_ids(self, call_ids: Sequence[str]) -> set[str]: ...


def journal_dir(store: Any, home: Path | None = None) -> Path | None:
    """Beside a DuckDB file (`<file>.journal/`); under `home` for server stores, one directory per
    database (its `store_id`, so `localhost` and `127.0.0.1` find one journal; a red team resumed
    through the other spelling and paid 189 calls again)."""
    dirs = journal_dirs(store, home)
    return dirs[0] if dirs else None


def journal_dirs(store: Any, home: Path | None = None) -> list[Path]:
    """Where this store's journal is written (first) and every place one may have been left: a server
    store's journal was once named by its URL, and a killed run of that version may have left one."""
    from envscaler_core.store.urls import parse_store_url

    url = getattr(store, "url", None)
    if not isinstance(url, str):
        return []
    beside = parse_store_url(url).beside(".journal")
    if beside is not None:
        return [beside]
    if home is None:
        return []
    by_url = home / "journal" / hashlib.sha256(url.encode()).hexdigest()[:16]
    identity = store.store_id() if hasattr(store, "store_id") else None
    return [home / "journal" / f"db-{identity}", by_url] if identity else [by_url]


class CallJournal:
    """Append-only JSON lines `{"call_id", "call"}`, one `os.write` per row."""

    def __init__(self, directory: Path, owner: str | None = None) -> None:
        """`owner`: the store's id, leading the file names, so that a store made anew at a deleted one's
        path does not take that store's journal for its own (`replay_orphans`)."""
        self.directory, self.owner = directory, owner
        self._fd: int | None = None
        self.path: Path | None = None
        self.size = 0

    def append(self, call_id: str, call: LLMCall) -> None:
        """Durable against a kill once this returns. Callers serialise appends (AuditLog's lock)."""
        if self._fd is None:
            self._open()
        line = json.dumps({"call_id": call_id, "call": call.model_dump(mode="json")}, separators=(",", ":"))
        data = (line + "\n").encode()
        os.write(self._fd, data)  # type: ignore[arg-type]
        self.size += len(data)

    def discard(self) -> None:
        """Every row written so far is in the store: the file goes (the next append opens a new one)."""
        if self._fd is None:
            return
        assert self.path is not None
        self.path.unlink(missing_ok=True)
        os.close(self._fd)
        self._fd, self.path, self.size = None, None, 0

    def _open(self) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        prefix = f"{self.owner}." if self.owner else ""
        path = self.directory / f"{prefix}{os.getpid()}-{uuid.uuid4().hex[:12]}.jsonl"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o600)
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # held for this process's life: not an orphan
        self._fd, self.path, self.size = fd, path, 0


def replay_orphans(directory: Path, store: ReplayStore) -> int:
    """Put the rows of journals whose writer is gone into the store; returns how many were missing there.
    A file that cannot be read back whole (other than a torn last line, a write the kill cut) raises
    JournalError naming it and the line, and stays where it is."""
    if not directory.is_dir():
        return 0
    added = 0
    owner = store.store_id() if hasattr(store, "store_id") else None
    for path in sorted(directory.glob("*.jsonl")):
        if not path.is_file():
            continue  # not a journal (a directory someone named *.jsonl)
        written_for = path.name.split(".", 1)[0] if path.name.count(".") > 1 else None
        if owner and written_for and written_for != owner:
            # another store's, left behind when its file was deleted and this one made at its path: its
            # calls were never this store's (a red team saw a new run charged for them); kept, set aside
            aside = path.with_name(path.name + ".other-store")
            path.rename(aside)
            log.warning("llm journal %s belongs to another store (id %s, this one is %s); not replayed, kept "
                        "as %s", path, written_for, owner, aside.name)
            continue
        try:
            fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        except FileNotFoundError:
            continue  # its owner closed cleanly meanwhile
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                continue  # a live gateway's journal
            rows = list(dict(_read(path)).items())  # one row per call id: a repeated line is one call
            fresh = store.known_call_ids([cid for cid, _ in rows])
            missing = [(cid, call) for cid, call in rows if cid not in fresh]
            if missing:
                kept = _record(store, path, missing)
                log.info("llm journal: %d answered call(s) of a killed run recorded from %s", kept, path)
            added += len(missing)
            path.unlink(missing_ok=True)
        finally:
            os.close(fd)
    return added


def _record(store: ReplayStore, path: Path, rows: list[tuple[str, LLMCall]]) -> int:
    """Record the rows, all at once; when the store refuses the batch, one at a time, and the rows it
    refuses even alone go to `<journal>.rejected` beside it (kept, named in a warning) instead of
    stopping every later run on this store at the same rows. Returns how many were recorded."""
    try:
        store.record_llm_calls([call for _, call in rows], call_ids=[cid for cid, _ in rows])
        return len(rows)
    except Exception:  # noqa: BLE001 - find the row(s) the store will not take
        pass
    refused = []
    for cid, call in rows:
        try:
            store.record_llm_calls([call], call_ids=[cid])
        except Exception as exc:  # noqa: BLE001
            refused.append((cid, call, f"{type(exc).__name__}: {str(exc).splitlines()[0][:200] if str(exc) else ''}"))
    if refused:
        aside = path.with_name(path.name + ".rejected")
        with aside.open("a", encoding="utf-8") as fh:
            for cid, call, why in refused:
                fh.write(json.dumps({"call_id": cid, "call": call.model_dump(mode="json"), "refused": why}) + "\n")
        log.warning("llm journal %s: the store refused %d row(s) (first: %s); kept in %s, the other %d recorded",
                    path, len(refused), refused[0][2], aside, len(rows) - len(refused))
    return len(rows) - len(refused)


def _read(path: Path) -> list[tuple[str, LLMCall]]:
    lines = path.read_bytes().split(b"\n")
    rows: list[tuple[str, LLMCall]] = []
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            entry = json.loads(raw)
            rows.append((str(entry["call_id"]), LLMCall.model_validate(entry["call"])))
        except (ValueError, KeyError, TypeError, ValidationError, RecursionError) as exc:
            if number == len(lines):  # no newline after it: the write a kill cut short
                log.warning("llm journal %s: ignoring a torn last line (%d bytes)", path, len(raw))
                continue
            first = str(exc).splitlines()[0][:200] if str(exc) else ""
            raise JournalError(f"LLM call journal {path}, line {number}: not a journal row ({type(exc).__name__}: "
                               f"{first}); the file is kept. Mend or delete that line and resume; moving the file "
                               "away starts without all of its rows (their calls are paid again)") from None
    return rows
