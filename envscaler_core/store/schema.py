"""Table definitions: one table per record kind, plus runs, the LLM call log and a schema marker.

Every record table has the same shape: the key `(run_id, fingerprint)`, a handful of columns copied
out of the record for filtering (named exactly like the model field they come from, indexed together
with `run_id`), the whole record as canonical JSON text in `data`, and timestamps. JSON is kept as
TEXT rather than a backend JSON type so DuckDB and PostgreSQL store and return identical bytes, which
is also what makes "unchanged" a plain string comparison.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import (
    Boolean,
    Column,
    DateTime,
    Float,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
)
from sqlalchemy.types import TypeEngine

from envscaler_core.models import (
    AcceptedEnv,
    BFCLEvalReport,
    BFCLTaskResult,
    EnvCandidate,
    EnvSpec,
    EnvTopic,
    Record,
    Scenario,
    SourceTask,
    StageFailure,
    Trajectory,
    ValidationRound,
)
from envscaler_core.models.interop import ImportedEnv, ImportedScenario

SCHEMA_VERSION = 5
"""Bump when a table changes shape; a store written by a newer version is refused on open, an older
one is brought up to date by the statements in `MIGRATIONS`."""

MIGRATIONS: dict[int, tuple[str, ...]] = {
    # 1 -> 2: token counts the endpoint did not report (no `usage`) are estimated, and say so.
    1: ("ALTER TABLE llm_calls ADD COLUMN estimated_tokens INTEGER DEFAULT 0",),
    # 2 -> 3: prompt tokens the provider served from its prefix cache (billed at the cached-input rate).
    2: ("ALTER TABLE llm_calls ADD COLUMN cached_tokens INTEGER DEFAULT 0",),
    # 3 -> 4: the cache's lookup index on the fingerprint alone (DuckDB scans the whole table for a
    # two-column index, so every LLM call's cache lookup grew with the store: bench_scale).
    3: ("CREATE INDEX IF NOT EXISTS ix_llm_calls_cache ON llm_calls (fingerprint)",),
    # 4 -> 5: whether other runs' cache may serve a row's answer (a run with llm.cache off fed the cache
    # of every later run before, replacing what they were answered with). Rows written before: shared.
    4: ("ALTER TABLE llm_calls ADD COLUMN IF NOT EXISTS shared BOOLEAN DEFAULT TRUE",),
}
"""From version N to N + 1: the statements to run (plain SQL both backends accept)."""

metadata = MetaData()

store_meta = Table(
    "store_meta",
    metadata,
    Column("key", String, primary_key=True),
    Column("value", String, nullable=False),
)


@dataclass(frozen=True)
class RecordKind:
    """How one `Record` subclass maps to its table."""

    model: type[Record]
    table: Table
    query_columns: tuple[str, ...]
    """Model fields copied into indexed columns of the same name: the only legal `where=` keys."""


def _record_table(name: str, columns: dict[str, TypeEngine[object]]) -> Table:
    table = Table(
        name,
        metadata,
        Column("run_id", String, primary_key=True),
        Column("fingerprint", String(64), primary_key=True),
        *(Column(col, type_, nullable=True) for col, type_ in columns.items()),
        Column("data", Text, nullable=False),
        Column("created_at", DateTime, nullable=False),
        Column("updated_at", DateTime, nullable=False),
    )
    for col in columns:
        Index(f"ix_{name}_{col}", table.c.run_id, table.c[col])
    return table


def _kind(model: type[Record], name: str, **columns: TypeEngine[object]) -> RecordKind:
    missing = [col for col in columns if col not in model.model_fields]
    if missing:  # a renamed model field must not silently become an always-NULL column
        raise AssertionError(f"{model.__name__} has no field(s) {missing} for table {name}")
    return RecordKind(model, _record_table(name, columns), tuple(columns))


RECORD_KINDS: dict[type[Record], RecordKind] = {
    kind.model: kind
    for kind in (
        _kind(SourceTask, "source_tasks", dataset=String(), stateful=Boolean()),
        _kind(EnvTopic, "env_topics", source_task_fp=String(), selected=Boolean()),
        _kind(EnvSpec, "env_specs", topic_fp=String()),
        _kind(EnvCandidate, "env_candidates", topic_fp=String(), spec_fp=String(), class_name=String(), status=String()),
        _kind(ValidationRound, "validation_rounds", candidate_fp=String(), mode=String(), verdict=String()),
        _kind(AcceptedEnv, "envs", env_id=String(), candidate_fp=String()),
        _kind(Scenario, "scenarios", env_id=String(), status=String()),
        _kind(
            Trajectory,
            "trajectories",
            scenario_fp=String(),
            env_id=String(),
            mode=String(),
            termination=String(),
            all_passed=Boolean(),
        ),
        _kind(StageFailure, "stage_failures", stage=String(), item_fp=String()),
        # added tables need no version bump: create_all adds them to an existing store on open
        _kind(BFCLTaskResult, "bfcl_results", task_id=String(), subset=String(), valid=Boolean()),
        _kind(BFCLEvalReport, "bfcl_reports", benchmark=String()),
        # EnvScaler imports (envscaler_core/interop): the records verbatim plus our audit of each.
        _kind(ImportedEnv, "envscaler_envs", env_id=String(), status=String()),
        _kind(ImportedScenario, "envscaler_scenarios", env_id=String(), split=String(), audit=String()),
    )
}

runs = Table(
    "runs",
    metadata,
    Column("run_id", String, primary_key=True),
    Column("status", String, nullable=False),
    Column("stage", String, nullable=True),
    Column("data", Text, nullable=False),
    Column("created_at", DateTime, nullable=False),
    Column("updated_at", DateTime, nullable=False),
)

llm_calls = Table(
    "llm_calls",
    metadata,
    # One row per logical call (audit log). The cache serves `ok` rows (`Store.cached_responses`).
    Column("call_id", String(32), primary_key=True),
    Column("fingerprint", String, nullable=False),
    Column("run_id", String, nullable=True),
    Column("stage", String, nullable=False),
    Column("prompt_id", String, nullable=True),
    Column("model", String, nullable=False),
    Column("status", String, nullable=False),
    Column("attempts", Integer, nullable=False),
    Column("repairs", Integer, nullable=False),
    Column("prompt_tokens", Integer, nullable=False),
    Column("completion_tokens", Integer, nullable=False),
    Column("estimated_tokens", Integer, nullable=True, default=0),
    Column("cached_tokens", Integer, nullable=True, default=0),
    Column("cost_usd", Float, nullable=False),
    Column("latency_ms", Float, nullable=False),
    Column("error", Text, nullable=True),
    Column("response", Text, nullable=True),
    Column("created_at", DateTime, nullable=False),
    Column("shared", Boolean, nullable=True, default=True),  # see MIGRATIONS[4]
    Index("ix_llm_calls_fingerprint", "fingerprint", "status"),
    Index("ix_llm_calls_cache", "fingerprint"),  # the one DuckDB uses for the cache lookup (see MIGRATIONS[3])
    Index("ix_llm_calls_run_stage", "run_id", "stage"),
)


def kind_of(model: type[Record]) -> RecordKind:
    """The table mapping for `model`, or a ValueError listing the kinds the store knows."""
    kind = RECORD_KINDS.get(model)
    if kind is None:
        known = ", ".join(sorted(m.__name__ for m in RECORD_KINDS))
        raise ValueError(f"the store has no table for {getattr(model, '__name__', model)!r}; known record kinds: {known}")
    return kind
