"""Spec: the steps a sharded run shows are labelled as one shard's.

Each shard publishes its own progress, and the run row keeps whichever shard published last; `status`
showed those steps as the run's ("synth 3/3, rollout 6/6" for a 6-candidate, 15-rollout run that two
shards worked on). A shard's progress now says which shard it is, and the summary says so.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest

from envscaler_core.config import Settings
from envscaler_core.models import Run
from envscaler_core.pipeline import RunContext
from envscaler_core.pipeline.report import build_summary, summary_text
from envscaler_core.store import Store
from flows.progress import make_tracker


@pytest.fixture
def ctx(tmp_path: Path) -> Iterator[RunContext]:
    store = Store.from_url(f"duckdb:///{tmp_path / 's.duckdb'}")
    store.save_run(Run(run_id="big", status="running"))
    gateway = SimpleNamespace(usage_by_stage=lambda: {})
    yield RunContext(run_id="big", settings=Settings(), store=store, gateway=gateway, runtime=None)  # type: ignore[arg-type]
    store.close()


def _shown_after_a_step(ctx: RunContext, shard: tuple[int, int]) -> str:
    tracker = make_tracker(ctx, shard)
    tracker.step_started("synth", total=3)
    tracker.batch_done(3, 0)
    ctx.update_run(progress=tracker.finish("running"))
    return summary_text(build_summary(ctx.store, "big"), "envscaler")


def test_a_shards_steps_are_shown_as_that_shards_only(ctx: RunContext) -> None:
    text = _shown_after_a_step(ctx, (1, 2))
    assert "steps (shard 1 of 2 only" in text, text


def test_a_whole_runs_steps_carry_no_shard_label(ctx: RunContext) -> None:
    text = _shown_after_a_step(ctx, (0, 1))
    assert "steps:" in text and "shard" not in text, text
