"""The factory's persistence: pipeline records, runs and the LLM call log/cache, behind one object.

Thread model: one `Store` (one engine) per process, shared by the flow's worker threads. Writes are
serialised by a process-wide lock, because DuckDB resolves concurrent writers optimistically (two
threads touching the same row get "Conflict on update" and must retry) and batching already makes a
write short; reads take their own pooled connection and run concurrently. Several *processes* need
PostgreSQL: DuckDB lets one process hold a file for writing.
"""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar

from sqlalchemy import Connection, Engine, case, func, select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.exc import SQLAlchemyError

from envscaler_core.models import (
    AcceptedEnv,
    EnvCandidate,
    EnvTopic,
    LLMCall,
    Record,
    Run,
    Scenario,
    SourceTask,
    Trajectory,
    canonical_json,
    utcnow,
)
from envscaler_core.store.engine import STORE_ID, first_line, forget_duckdb, naive_utc, open_engine, release_dialect
from envscaler_core.store.errors import StoreError
from envscaler_core.store.records import UpsertCounts, group_rows, load_models, upsert_kind, where_clauses
from envscaler_core.store.schema import kind_of, llm_calls, runs, store_meta
from envscaler_core.store.urls import Backend, StoreURL, parse_store_url

R = TypeVar("R", bound=Record)

# (funnel key, record model, column, value): the count of rows of that kind in the run, optionally only
# those whose column equals value. Ordered as the pipeline runs.
_FUNNEL: tuple[tuple[str, type[Record], str | None, object], ...] = (
    ("source_tasks", SourceTask, None, None),
    ("stateful_tasks", SourceTask, "stateful", True),
    ("topics", EnvTopic, None, None),
    ("selected_topics", EnvTopic, "selected", True),
    ("candidates", EnvCandidate, None, None),
    ("accepted_envs", AcceptedEnv, None, None),
    ("scenarios", Scenario, None, None),
    ("verified_scenarios", Scenario, "status", "verified"),
    ("trajectories", Trajectory, None, None),
)


class Store:
    """See docs/CONTRACTS.md ("Store") for the API and its guarantees."""

    def __init__(self, engine: Engine, location: StoreURL) -> None:
        self._engine = engine
        self._location = location
        self._write_lock = threading.Lock()
        self._closed = False
        self._id: str | None = None

    @classmethod
    def from_url(cls, url: str, *, create: bool = True) -> Store:
        """Open (creating if needed) the store at `url`: `duckdb:///path` or `postgresql[+psycopg]://...`.
        Read-only verbs pass `create=False`: a DuckDB file that does not exist is `StoreMissing`."""
        location = parse_store_url(url)
        return cls(open_engine(location, create=create), location)

    # -- plumbing ---------------------------------------------------------------------------------

    @property
    def engine(self) -> Engine:
        """The SQLAlchemy engine, for read-only SQL (exports, dashboards). Write through the methods."""
        return self._engine

    @property
    def backend(self) -> Backend:
        return self._location.backend

    @property
    def url(self) -> str:
        """The normalised URL, password hidden."""
        return self._location.display

    def store_id(self) -> str | None:
        """The store's own name, written when its schema was made: the same under every URL that reaches
        it, and new for a file made anew at a deleted one's path. Read once: it never changes."""
        if self._id is None:
            with self._read("store id") as conn:
                self._id = conn.execute(
                    select(store_meta.c.value).where(store_meta.c.key == STORE_ID)).scalar_one_or_none()
        return self._id

    def close(self) -> None:
        """Release connections (and with them the DuckDB file lock). Idempotent."""
        if not self._closed:
            self._closed = True
            self._engine.dispose()
            release_dialect(self._engine)
            forget_duckdb(self._location.path)

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @contextmanager
    def _write(self, action: str) -> Iterator[Connection]:
        """One transaction under the write lock: all of it commits or none of it does."""
        self._check_open()
        with self._write_lock:
            try:
                with self._engine.begin() as conn:
                    yield conn
            except SQLAlchemyError as exc:
                raise StoreError(f"{action} failed on {self.url} (rolled back): {first_line(exc)}") from exc

    @contextmanager
    def _read(self, action: str) -> Iterator[Connection]:
        self._check_open()
        try:
            with self._engine.connect() as conn:
                yield conn
        except SQLAlchemyError as exc:
            raise StoreError(f"{action} failed on {self.url}: {first_line(exc)}") from exc

    def _check_open(self) -> None:
        if self._closed:
            raise StoreError(f"store {self.url} is closed")

    @staticmethod
    def _check_run_id(run_id: object) -> str:
        if not isinstance(run_id, str) or not run_id:
            raise ValueError(f"run_id must be a non-empty string, got {run_id!r}")
        return run_id

    # -- records ----------------------------------------------------------------------------------

    def upsert(self, records: Sequence[Record], run_id: str) -> UpsertCounts:
        """Insert new records, update those whose content changed (e.g. status), skip identical ones.

        Records of several kinds may be mixed; the whole call is one transaction. Counts are over
        distinct (kind, fingerprint) pairs: a fingerprint repeated within a call counts once and its
        last occurrence wins.
        """
        self._check_run_id(run_id)
        groups = group_rows(records, run_id)
        if not groups:
            return UpsertCounts()
        counts = UpsertCounts()
        now = naive_utc(utcnow())
        with self._write(f"upsert of {len(records)} record(s) for run {run_id!r}") as conn:
            for kind, rows in groups.items():
                counts += upsert_kind(conn, kind, run_id, rows, now)
        return counts

    def get(self, model_cls: type[R], fingerprint: str, run_id: str) -> R | None:
        kind = kind_of(model_cls)
        table = kind.table
        with self._read(f"get {model_cls.__name__}") as conn:
            row = conn.execute(
                select(table.c.run_id, table.c.fingerprint, table.c.data).where(
                    table.c.run_id == run_id, table.c.fingerprint == fingerprint
                )
            ).first()
        if row is None:
            return None
        (model,) = load_models(kind, [tuple(row)])
        return model  # type: ignore[return-value]

    def query(self, model_cls: type[R], run_id: str | None = None, where: Mapping[str, Any] | None = None) -> list[R]:
        """Records of one kind, oldest first (ties by fingerprint). `run_id=None` spans all runs, so a
        record present in two runs is returned twice. `where` keys must be indexed columns."""
        kind = kind_of(model_cls)
        table = kind.table
        clauses = where_clauses(kind, run_id, where)
        stmt = (
            select(table.c.run_id, table.c.fingerprint, table.c.data)
            .where(*clauses)
            .order_by(table.c.created_at, table.c.fingerprint, table.c.run_id)
        )
        with self._read(f"query {model_cls.__name__}") as conn:
            rows = [tuple(row) for row in conn.execute(stmt)]
        return load_models(kind, rows)  # type: ignore[return-value]

    def fingerprints(self, model_cls: type[Record], run_id: str) -> set[str]:
        """What a resumed stage skips: fingerprints of `model_cls` already stored for the run."""
        table = kind_of(model_cls).table
        with self._read(f"fingerprints of {model_cls.__name__}") as conn:
            return set(conn.execute(select(table.c.fingerprint).where(table.c.run_id == run_id)).scalars())

    # -- runs -------------------------------------------------------------------------------------

    def save_run(self, run: Run) -> None:
        """Insert or replace the run record (keyed by run_id)."""
        if not isinstance(run, Run):
            raise TypeError(f"save_run() takes a Run, got {type(run).__name__}")
        row = {
            "run_id": run.run_id,
            "status": run.status,
            "stage": run.stage,
            "data": canonical_json(run.model_dump(mode="json")),
            "created_at": naive_utc(run.created_at),
            "updated_at": naive_utc(run.updated_at),
        }
        stmt = pg_insert(runs).values(row)
        stmt = stmt.on_conflict_do_update(
            index_elements=[runs.c.run_id],
            set_={col: stmt.excluded[col] for col in ("status", "stage", "data", "updated_at")},
        )
        with self._write(f"save_run {run.run_id!r}") as conn:
            conn.execute(stmt)

    def forget_run(self, run_id: str) -> None:
        """Remove a run's row. Only for a row the command that wrote it takes back before the run did anything
        (its other rows, if any, are left as they are)."""
        with self._write(f"forget_run {run_id!r}") as conn:
            conn.execute(runs.delete().where(runs.c.run_id == run_id))

    def get_run(self, run_id: str) -> Run | None:
        with self._read(f"get_run {run_id!r}") as conn:
            data = conn.execute(select(runs.c.data).where(runs.c.run_id == run_id)).scalar_one_or_none()
        return None if data is None else Run.model_validate_json(data)

    def list_runs(self) -> list[Run]:
        """All runs, oldest first."""
        with self._read("list_runs") as conn:
            rows = conn.execute(select(runs.c.data).order_by(runs.c.created_at, runs.c.run_id)).scalars().all()
        return [Run.model_validate_json(data) for data in rows]

    # -- LLM calls: audit log and response cache ----------------------------------------------------

    def record_llm_call(self, call: LLMCall) -> None:
        """Append one call to the audit log; an `ok` call with a response also feeds the cache."""
        self.record_llm_calls([call])

    def record_llm_calls(self, calls: Sequence[LLMCall], call_ids: Sequence[str] | None = None) -> None:
        """Append several calls in one transaction (what a batch-flushing caller should use). `call_ids`:
        the ids the caller already gave them (the gateway's journal), else new ones."""
        if call_ids is not None and len(call_ids) != len(calls):
            raise ValueError(f"{len(call_ids)} call ids for {len(calls)} calls")
        rows = []
        for index, call in enumerate(calls):
            if not isinstance(call, LLMCall):
                raise TypeError(f"calls[{index}] is a {type(call).__name__}, not an LLMCall")
            rows.append(
                {
                    "call_id": call_ids[index] if call_ids is not None else uuid.uuid4().hex,
                    **call.model_dump(
                        include={
                            "fingerprint", "run_id", "stage", "prompt_id", "model", "status", "attempts", "repairs",
                            "prompt_tokens", "cached_tokens", "completion_tokens", "estimated_tokens", "cost_usd",
                            "latency_ms", "error", "shared",
                        }
                    ),
                    "response": None if call.response is None else canonical_json(call.response),
                    "created_at": naive_utc(call.created_at),
                }
            )
        if not rows:
            return
        with self._write(f"record of {len(rows)} LLM call(s)") as conn:
            # executemany (SQLAlchemy's "insertmanyvalues": the one-row statement compiled once, sent as
            # multi-row VALUES pages), not `.values(rows)`, which compiles a new n-row statement per call
            conn.execution_options(insertmanyvalues_page_size=1000).execute(llm_calls.insert(), rows)

    def known_call_ids(self, call_ids: Sequence[str]) -> set[str]:
        """Which of these audit row ids the store already has (a journal replay skips them)."""
        found: set[str] = set()
        with self._read("lookup of LLM call ids") as conn:
            for start in range(0, len(call_ids), 1000):
                chunk = list(call_ids[start:start + 1000])
                found.update(conn.execute(select(llm_calls.c.call_id).where(llm_calls.c.call_id.in_(chunk))).scalars())
        return found

    def cached_response(self, fingerprint: str, run_id: str | None = None,
                        asker: str | None = None) -> dict[str, Any] | None:
        """The answer the cache serves for this fingerprint: the first of `cached_responses`."""
        found = self.cached_responses(fingerprint, run_id, asker)
        return found[0] if found else None

    def cached_responses(self, fingerprint: str, run_id: str | None = None,
                         asker: str | None = None) -> list[dict[str, Any]]:
        """The successful (`status == "ok"`) responses the cache may serve for this fingerprint, in the
        order it tries them: the asking run's (`asker`) own first, then other runs' shared ones, each
        oldest first (ties: the smallest call id); only `run_id`'s own when it is given.

        Oldest first, so what a run is served never changes because a later run paid again for the same
        request (an evaluation on its own answers, two shards racing, or a run with `llm.cache` off,
        whose rows are not shared at all: before, the newest row won and a cache-off run against a
        faulty endpoint replaced the answers of every later run). A caller that cannot use an answer (a
        stale structured reply) tries the next one, so one bad row does not make every run pay again.
        The query filters on the fingerprint alone and the few rows it finds are chosen here: DuckDB
        answers a single-column equality from `ix_llm_calls_cache`, while any further condition made it
        scan the whole table, a cost per call that grew with the store (bench_scale)."""
        c = llm_calls.c
        stmt = select(c.response, c.status, c.created_at, c.call_id, c.run_id, c.shared).where(
            c.fingerprint == fingerprint)
        with self._read("LLM cache lookup") as conn:
            rows = [r for r in conn.execute(stmt) if r.status == "ok" and r.response is not None]
        own = asker if run_id is None else run_id
        usable = [r for r in rows if (own is not None and r.run_id == own)
                  or (run_id is None and r.shared is not False)]
        usable.sort(key=lambda r: (own is None or r.run_id != own, r.created_at, r.call_id))
        return [dict(json.loads(r.response)) for r in usable]

    def cached_fingerprints(self) -> list[str]:
        """Every fingerprint `cached_responses` may answer (from any run): the gateway reads them once
        so that lookups which cannot hit skip the database (`llm.cache.KnownAnswers`)."""
        stmt = select(llm_calls.c.fingerprint).where(
            llm_calls.c.status == "ok", llm_calls.c.response.is_not(None)).distinct()
        with self._read("LLM cache fingerprints") as conn:
            return [fp for (fp,) in conn.execute(stmt)]

    def llm_usage(self, run_id: str) -> dict[str, dict[str, int | float]]:
        """Per stage: calls (all rows, cache hits included), cached (status "cached"), retries (HTTP
        attempts beyond the first), prompt/completion tokens, how many prompt tokens the provider served
        from its prefix cache (`cached_tokens`), how many tokens were estimated (the endpoint sent no
        usage) and cost, as recorded by the gateway."""
        c = llm_calls.c
        stmt = (
            select(
                c.stage,
                func.count(),
                func.sum(case((c.status == "cached", 1), else_=0)),
                func.sum(case((c.attempts > 1, c.attempts - 1), else_=0)),
                func.sum(c.prompt_tokens),
                func.sum(func.coalesce(c.cached_tokens, 0)),
                func.sum(c.completion_tokens),
                func.sum(func.coalesce(c.estimated_tokens, 0)),
                func.sum(c.cost_usd),
            )
            .where(c.run_id == run_id)
            .group_by(c.stage)
            .order_by(c.stage)
        )
        with self._read(f"llm_usage for run {run_id!r}") as conn:
            rows = [tuple(row) for row in conn.execute(stmt)]
        return {
            stage: {
                "calls": int(calls),
                "cached": int(cached or 0),
                "retries": int(retries or 0),
                "prompt_tokens": int(prompt or 0),
                "cached_tokens": int(cached_tokens or 0),
                "completion_tokens": int(completion or 0),
                "estimated_tokens": int(estimated or 0),
                "cost_usd": float(cost or 0.0),
            }
            for stage, calls, cached, retries, prompt, cached_tokens, completion, estimated, cost in rows
        }

    # -- reporting ----------------------------------------------------------------------------------

    def funnel(self, run_id: str) -> dict[str, int]:
        """Counts per pipeline step for the run, in pipeline order (what the run artifact shows)."""
        out: dict[str, int] = {}
        with self._read(f"funnel for run {run_id!r}") as conn:
            for key, model, column, value in _FUNNEL:
                table = kind_of(model).table
                stmt = select(func.count()).select_from(table).where(table.c.run_id == run_id)
                if column is not None:
                    stmt = stmt.where(table.c[column] == value)
                out[key] = int(conn.execute(stmt).scalar_one())
        return out
