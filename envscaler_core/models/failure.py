"""Why an item did not make it through a stage, kept so resume can retry it a bounded number of times."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from envscaler_core.models.base import Record


class StageFailure(Record):
    """One item (task, topic, candidate, env, scenario) that a stage could not finish.

    Identity is (stage, item): a retry updates `attempts` and `reason` in place, and once `attempts`
    reaches the configured limit resume stops trying and the reason stays on record."""

    fingerprint_fields: ClassVar[tuple[str, ...]] = ("stage", "item_fp")

    stage: str = Field(description="mine.judge, mine.topic, synth, validate, scen, rollout")
    item_fp: str
    attempts: int = Field(default=1, ge=1)
    reason: str
