"""Stage 1 output: an environment topic inferred from a stateful task."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from envscaler_core.models.base import Record


class EnvTopic(Record):
    """The environment a task would naturally happen in, with the two 1-10 scores the reference
    filters on (usefulness and modelability, both >= 7 by default)."""

    # One topic per source task: two tasks that yield the same text are still two topics (different
    # scores, different example task); `select_topics` marks the textual duplicates. Keying on the
    # text alone let the two overwrite each other in turn, so a re-run could select differently.
    fingerprint_fields: ClassVar[tuple[str, ...]] = ("source_task_fp", "summary", "introduction")

    summary: str = Field(min_length=1, description="Short label, e.g. 'Clinic appointment scheduler'.")
    introduction: str = Field(min_length=1, description="~3 sentences: structure, state, operations.")
    usefulness: int = Field(ge=1, le=10)
    modelability: int = Field(ge=1, le=10)
    analysis: str = ""
    example_task: str = Field(description="The source task the topic was inferred from.")
    source_task_fp: str = Field(description="Fingerprint of that SourceTask.")
    embedding: list[float] | None = Field(default=None, description="Embedding of summary+introduction.")
    selected: bool | None = Field(default=None, description="Survived dedup, score filter and selection.")
    drop_reason: str | None = None
