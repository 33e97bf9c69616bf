"""The durable record of one factory run, what `resume` and `status` read."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any, Literal

from pydantic import Field

from envscaler_core.models.base import Model, utcnow
from envscaler_core.models.progress import RunProgress
from envscaler_core.models.source_report import SourceReport

RunStatus = Literal["running", "completed", "empty", "failed", "stopped_budget", "interrupted"]
"""`empty`: every stage ran, but the run produced nothing to train on (the summary's notes say which
stage came out empty and why); like `completed`, there is nothing left to resume."""

FINISHED: tuple[str, ...] = ("completed", "empty")
"""Statuses a resume has nothing to do for."""

RUN_ID_PATTERN = r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$"
"""A run id names a directory (OUT/RUN_ID/) and is pasted into commands: letters, digits, '.', '_', '-',
not starting with '.' or '-' (so never '.', '..', a hidden name or an option), at most 128 characters."""


def run_id_problem(run_id: object) -> str | None:
    """Why `run_id` cannot name a run, in words for the user; None when it can."""
    if isinstance(run_id, str) and re.fullmatch(RUN_ID_PATTERN, run_id):
        return None
    return (f"run id {run_id!r} is not usable: letters, digits, '.', '_' and '-' only, starting with a letter, "
            "digit or '_', at most 128 characters")


class Run(Model):
    run_id: str = Field(pattern=RUN_ID_PATTERN)
    created_at: datetime = Field(default_factory=utcnow)
    updated_at: datetime = Field(default_factory=utcnow)
    status: RunStatus = "running"
    stage: str | None = Field(default=None, description="Last stage entered.")
    config: dict[str, Any] = Field(default_factory=dict, description="The run's config, as JSON.")
    sources: list[str] = Field(default_factory=list)
    error: str | None = None
    sources_report: SourceReport | None = Field(default=None, description="What reading the sources gave, per file.")
    progress: RunProgress | None = Field(default=None, description="Per-step counts, LLM use and timings.")
    outputs: dict[str, str] = Field(default_factory=dict, description="What the run wrote: 'exports', 'report' -> path.")
    origin: str = Field(default="run", description="What started it: 'run', 'demo' (resumes restart the bundled "
                        "mock LLM), 'eval', 'import'.")
    stages: list[str] | None = Field(default=None, description="The stages it was asked for; None = all.")
    mock_llm: bool = Field(default=False, description="Answered by the bundled MOCK LLM: its costs are illustrative.")
