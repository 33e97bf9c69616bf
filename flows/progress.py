"""Publishing a run's live progress from inside the flow: the JSON file beside the store, the run row,
and a Prefect progress artifact (percent done, the per-step figures as its description)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from uuid import UUID

from envscaler_core.config import envscaler_data_dir
from envscaler_core.models.progress import RunProgress
from envscaler_core.pipeline.artifact_keys import artifact_key  # noqa: F401 - the flows publish under it
from envscaler_core.pipeline import RunContext
from envscaler_core.pipeline.progress import ProgressTracker, Sink, file_sink, progress_path
from envscaler_core.pipeline.progress_text import progress_lines

log = logging.getLogger(__name__)

TICK_S = 1.0
ARTIFACT_EVERY_S = 3.0


def percent(progress: RunProgress, planned: Sequence[str]) -> float:
    """Share of the planned steps behind us, counting each running one by its items done (streamed
    stages run side by side)."""
    if not planned:
        return 100.0
    finished = {s.name for s in progress.steps if s.finished_at is not None}
    share = float(sum(1 for name in planned if name in finished))
    for step in progress.running:
        if step.name in planned and step.name not in finished and step.total:
            share += min(1.0, (step.done + step.failed) / step.total)
    return round(100.0 * share / len(planned), 1)


class PrefectProgress:
    """One progress artifact per flow run, updated as the figures change (a failed update is logged once)."""

    def __init__(self, run_id: str, planned: Sequence[str]) -> None:
        self.run_id, self.planned = run_id, list(planned)
        self.artifact_id: UUID | None = None
        self.broken = False
        self.last = ""

    async def update(self, progress: RunProgress) -> None:
        from prefect.artifacts import acreate_progress_artifact, aupdate_progress_artifact

        if self.broken:
            return
        text = "\n".join(["| step | figures |", "|---|---|"] + [
            f"| {line.strip().split(' ', 1)[0]} | {line.strip().split(' ', 1)[-1]} |" for line in progress_lines(progress)])
        pct = percent(progress, self.planned)
        if f"{pct}{text}" == self.last:
            return
        self.last = f"{pct}{text}"
        try:
            if self.artifact_id is None:
                self.artifact_id = await acreate_progress_artifact(
                    progress=pct, key=artifact_key("progress", self.run_id), description=text)
            else:
                await aupdate_progress_artifact(self.artifact_id, progress=pct, description=text)
        except Exception as exc:  # noqa: BLE001 - progress is a view: never stop the run for it
            self.broken = True
            log.warning("progress artifact switched off: %s: %s", type(exc).__name__, exc)


def make_tracker(ctx: RunContext, shard: tuple[int, int]) -> ProgressTracker:
    """File (every 0.5 s) and run-row (every 5 s) sinks; the funnel is re-read on forced publishes."""
    name = ctx.run_id if shard[1] == 1 else f"{ctx.run_id}.shard-{shard[0]}-of-{shard[1]}"
    path: Path = progress_path(ctx.settings.store.url, name, envscaler_data_dir())
    sinks = [file_sink(path), Sink("run row", lambda p: ctx.update_run(progress=p), interval_s=5.0)]
    run = ctx.store.get_run(ctx.run_id)
    return ProgressTracker(ctx.run_id, ctx.gateway.usage_by_stage, store=ctx.store.url, sinks=sinks,
                           funnel=lambda: ctx.store.funnel(ctx.run_id), mock_llm=bool(run and run.mock_llm),
                           resumed=bool(run and run.progress),  # an earlier invocation published progress
                           shard="" if shard[1] == 1 else f"shard {shard[0]} of {shard[1]}")


@contextlib.asynccontextmanager
async def publishing(tracker: ProgressTracker, planned: Sequence[str]) -> AsyncIterator[None]:
    """Tick the sinks and the Prefect artifact while the body runs; a last forced publish at the end."""
    artifact = PrefectProgress(tracker.state.run_id, planned)

    async def tick() -> None:
        since_artifact = ARTIFACT_EVERY_S
        while True:
            await asyncio.sleep(TICK_S)
            tracker.publish()
            since_artifact += TICK_S
            if since_artifact >= ARTIFACT_EVERY_S:
                since_artifact = 0.0
                await artifact.update(tracker.snapshot())

    ticker = asyncio.create_task(tick())
    try:
        yield
    finally:
        ticker.cancel()
        with contextlib.suppress(BaseException):
            await ticker
        with contextlib.suppress(Exception):  # bounded: an interrupted run must not hang on the API
            await asyncio.wait_for(artifact.update(tracker.snapshot()), timeout=5)
