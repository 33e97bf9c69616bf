"""Records of an EnvScaler import: its env and scenario records kept verbatim, with our audit of each.

EnvScaler's own files are the source of truth for the user (they train on them), so the record is
stored exactly as read, type markers included: exporting an imported run writes the same bytes of
meaning back. The audit sits beside it: whether the env class survives our programmatic validation,
and for every scenario the class of its worst check function.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar, Literal

from pydantic import Field

from envscaler_core.models.base import Model, Record
from envscaler_core.models.scenario import ToolCall

CheckClass = Literal["check_error", "nondeterministic", "not_bool", "vacuous", "unproven", "verified"]
AuditClass = Literal["env_rejected", "check_error", "nondeterministic", "not_bool", "vacuous", "unproven", "verified"]
AUDIT_CLASSES: tuple[AuditClass, ...] = ("verified", "unproven", "vacuous", "check_error", "not_bool", "nondeterministic",
                                         "env_rejected")
SEVERITY: dict[str, int] = {"env_rejected": 6, "check_error": 5, "nondeterministic": 4, "not_bool": 3, "vacuous": 2,
                            "unproven": 1, "verified": 0}
"""Worse is larger: a scenario takes the class of its worst check, and a rejected env trumps all."""

Split = Literal["rl", "sft"]


def worst(classes: list[str]) -> str:
    """The most severe class in `classes` (callers never pass an empty list)."""
    return max(classes, key=SEVERITY.__getitem__)


class CheckAudit(Model):
    """One `check_func` of a scenario, run under EnvScaler's contract in the sandbox."""

    index: int = Field(ge=0)
    item: str = ""
    outcome: CheckClass
    on_initial: bool | None = Field(default=None, description="Its bool on the initial state (None: error/not bool).")
    on_solved: bool | None = Field(default=None, description="Its bool after the reference solution, if one ran.")
    error: str | None = None


class ImportedEnv(Record):
    """One env of EnvScaler's env metadata, verbatim, with the verdict of our validation."""

    fingerprint_fields: ClassVar[tuple[str, ...]] = ("env_id",)

    env_id: str = Field(min_length=1, description="EnvScaler's id (the metadata dict key), kept as is.")
    position: int = Field(ge=0, description="Order in the metadata file; exports keep it.")
    source: str = Field(description="Where it was read, e.g. 'env_metadata.json[env_3]'.")
    record_json: str = Field(description="The env record exactly as read: JSON text, so key order and type "
                             "markers survive the store's canonical (key-sorted) JSON.")
    class_name: str
    candidate_fp: str = Field(description="The EnvCandidate our validation judged.")
    status: Literal["accepted", "rejected"]
    reasons: list[str] = Field(default_factory=list, description="Why it was rejected (empty when accepted).")
    score: float = Field(default=0.0, ge=0.0, le=1.0)

    @property
    def record(self) -> dict[str, Any]:
        return dict(json.loads(self.record_json))


class ImportedScenario(Record):
    """One scenario record (RL: with `checklist_with_func`; SFT: without), verbatim, with its audit."""

    fingerprint_fields: ClassVar[tuple[str, ...]] = ("split", "position", "record_json")

    split: Split
    position: int = Field(ge=0, description="Order within its split (EnvScaler addresses scenarios by index).")
    source: str = Field(description="File and index it was read from, e.g. 'rl.json[12]'.")
    env_id: str
    task_id: str = Field(description="EnvScaler's task_id as text (not unique in EnvScaler's own data).")
    record_json: str = Field(description="The scenario record exactly as read (JSON text, key order kept).")
    audit: AuditClass
    reasons: list[str] = Field(default_factory=list)
    checks: list[CheckAudit] = Field(default_factory=list)
    reference_solution: list[ToolCall] = Field(default_factory=list, description="Calls that verified it, if any.")
    solution_origin: Literal["agent", "file"] | None = None
    attempts: list[str] = Field(default_factory=list, description="Why each solution tried so far did not verify it.")
    supplied_solution: list[ToolCall] = Field(default_factory=list, description=(
        "The reference-solutions sidecar's calls for this record, as given, whatever they did: the export "
        "writes them back, so a re-import replays them and reaches the same audit (differential round 3, F5)."))
    scenario_fp: str | None = Field(default=None, description=(
        "The factory Scenario it was promoted to, if any: how a trajectory played on that Scenario finds "
        "this record's own task_id (round-trip check 4, F1)."))

    @property
    def record(self) -> dict[str, Any]:
        return dict(json.loads(self.record_json))


def record_text(record: dict[str, Any]) -> str:
    """A record as order-preserving JSON text (what `record_json` holds)."""
    return json.dumps(record, ensure_ascii=False, separators=(",", ":"))
