"""Stage 1 input: one task utterance mined from an existing tool-use dataset."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from envscaler_core.models.base import Record


class SourceTask(Record):
    """A user task from a public dataset, with where it came from (kept through every stage,
    unlike the reference, which loses `task_from` after its first step)."""

    fingerprint_fields: ClassVar[tuple[str, ...]] = ("text",)

    text: str = Field(min_length=1, description="The user's first utterance, cleaned.")
    dataset: str = Field(description="Importer name, e.g. 'api-bank', 'bfcl', 'jsonl'.")
    origin: str = Field(description="File and line/index the text was read from, e.g. 'x.json:#12'.")
    stateful: bool | None = Field(default=None, description="Stage 1 judgement; None = not judged yet.")
    judge_reason: str | None = None
