"""Records of a BFCL multi-turn evaluation: one result per task, one report per run."""

from __future__ import annotations

from datetime import datetime
from typing import Any, ClassVar, Literal

from pydantic import Field

from envscaler_core.models.base import Model, Record, utcnow
from envscaler_core.models.trajectory import TokenUsage

EvalAgent = Literal["gold", "llm"]


class BFCLTaskResult(Record):
    """One task played and scored by `multi_turn_checker` (valid = the checker's verdict)."""

    fingerprint_fields: ClassVar[tuple[str, ...]] = ("task_id", "subset", "agent", "model")

    task_id: str
    subset: str
    agent: EvalAgent
    model: str = Field(description="The agent's model ('gold' for the ground-truth replay).")
    valid: bool
    error_type: str | None = None
    error_message: str | None = None
    details: Any = None
    turns: int = Field(ge=0, description="Turns played (fewer than the task's after a force-quit).")
    steps: int = Field(ge=0, description="Assistant messages.")
    tool_calls: int = Field(ge=0)
    force_quit: bool = False
    decoded: list[list[list[str]]] = Field(default_factory=list)
    messages: list[dict[str, Any]] = Field(default_factory=list)
    usage: TokenUsage = Field(default_factory=TokenUsage)
    elapsed_s: float = Field(ge=0)
    finished_at: datetime = Field(default_factory=utcnow)


class SubsetScore(Model):
    tasks: int = Field(ge=0)
    valid: int = Field(ge=0)
    accuracy: float = Field(ge=0, le=1)


class BFCLEvalReport(Record):
    """The results table of one evaluation run (rebuilt from the task results after every change)."""

    fingerprint_fields: ClassVar[tuple[str, ...]] = ("benchmark",)

    benchmark: Literal["bfcl-mt"] = "bfcl-mt"
    agent: EvalAgent
    model: str
    subsets: dict[str, SubsetScore]
    overall: float | None = Field(default=None, description="Unweighted mean of the subsets' accuracies.")
    complete: bool = Field(description="Every requested task has a result.")
    updated_at: datetime = Field(default_factory=utcnow)
