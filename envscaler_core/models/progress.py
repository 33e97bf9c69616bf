"""A run's live progress: what `envscaler run` draws, `status --watch` reads and the report keeps.

Published while the run is active (a JSON file beside the store, the run row, a Prefect artifact),
because a DuckDB store cannot be opened by a second process while the run holds it."""

from __future__ import annotations

from datetime import datetime

from pydantic import Field

from envscaler_core.models.base import Model, utcnow


class StepProgress(Model):
    """One pipeline step (e.g. `validate`): items done of total, and what the LLM cost during it."""

    name: str
    total: int = Field(default=0, description=(
        "Items pending when the step started, plus those its upstream step handed it since (streamed stages); "
        "0 for whole-run steps."))
    done: int = 0
    failed: int = 0
    started_at: datetime = Field(default_factory=utcnow)
    finished_at: datetime | None = None
    stopped: str | None = Field(default=None, description="Set when the run ended inside this step (failed, "
                                "interrupted, stopped_budget): its items are not all done, so it must not read "
                                "as finished.")
    llm_calls: int = 0
    tokens: int = 0
    cost_usd: float = 0.0

    @property
    def elapsed_s(self) -> float:
        return ((self.finished_at or utcnow()) - self.started_at).total_seconds()


class RunProgress(Model):
    run_id: str
    pid: int | None = Field(default=None, description="The process running it (for `status` on a locked store).")
    store: str = ""
    status: str = Field(default="running", description="starting, running, then the run's final status.")
    note: str = Field(default="", description="What the run is doing before its first step (e.g. waiting for Prefect).")
    started_at: datetime = Field(default_factory=utcnow)
    updated_at: datetime = Field(default_factory=utcnow)
    steps: list[StepProgress] = Field(default_factory=list)
    funnel: dict[str, int] = Field(default_factory=dict)
    mock_llm: bool = Field(default=False, description="Answered by the bundled MOCK LLM: its costs are illustrative.")
    shard: str = Field(default="", description=(
        "The shard this progress is of (`shard 1 of 2`), '' for a whole run: each shard publishes only its own "
        "steps, and the run row holds whichever shard published last."))
    resumed: bool = Field(default=False, description=(
        "This invocation continues a run that had run before: its steps count only this invocation's work."))

    @property
    def current(self) -> StepProgress | None:
        """The most recently started step still running (streamed stages run side by side), else the last."""
        running = self.running
        return running[-1] if running else self.steps[-1] if self.steps else None

    @property
    def running(self) -> list[StepProgress]:
        return [s for s in self.steps if s.finished_at is None]

    @property
    def llm_calls(self) -> int:
        return sum(s.llm_calls for s in self.steps)

    @property
    def tokens(self) -> int:
        return sum(s.tokens for s in self.steps)

    @property
    def cost_usd(self) -> float:
        return sum(s.cost_usd for s in self.steps)

    @property
    def elapsed_s(self) -> float:
        return (self.updated_at - self.started_at).total_seconds()
