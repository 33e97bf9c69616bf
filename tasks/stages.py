"""One Prefect task per stage batch, with retries only for transient infrastructure faults."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from prefect import task
from prefect.cache_policies import NO_CACHE
from prefect.tasks import exponential_backoff

from envscaler_core.pipeline import BatchReport, RunContext
from envscaler_core.pipeline import stages as S


def is_transient(task: Any, task_run: Any, state: Any) -> bool:
    """Retry an endpoint outage or a sandbox/store hiccup; never a bad key, a budget stop or a bug."""
    from envscaler_core.llm.errors import LLMUnavailableError

    # `_sync=True`: inside the async engine a bare `state.result()` returns an un-awaited coroutine
    # and the exception would never be seen (every failure would look permanent)
    exc = state.result(raise_on_failure=False, _sync=True)
    return isinstance(exc, LLMUnavailableError | ConnectionError | TimeoutError) or (
        isinstance(exc, OSError) and not isinstance(exc, FileNotFoundError | PermissionError))


_RETRYING = dict(retries=2, retry_delay_seconds=exponential_backoff(backoff_factor=2), retry_jitter_factor=0.5,
                 retry_condition_fn=is_transient, cache_policy=NO_CACHE, persist_result=False)


@task(name="ingest-sources", cache_policy=NO_CACHE, persist_result=False)
def ingest(ctx: RunContext, paths: Sequence[str]) -> BatchReport:
    return S.ingest(ctx, [Path(p) for p in paths])


@task(name="judge-batch", **_RETRYING)
async def judge(ctx: RunContext, fps: Sequence[str]) -> BatchReport:
    return await S.judge(ctx, fps)


@task(name="topic-batch", **_RETRYING)
async def topics(ctx: RunContext, fps: Sequence[str]) -> BatchReport:
    return await S.topics(ctx, fps)


@task(name="select-topics", **_RETRYING)
async def select(ctx: RunContext) -> BatchReport:
    return await S.select(ctx)


@task(name="synthesize-batch", **_RETRYING)
async def synthesize(ctx: RunContext, fps: Sequence[str]) -> BatchReport:
    return await S.synthesize(ctx, fps)


@task(name="mark-duplicate-candidates", cache_policy=NO_CACHE, persist_result=False)
def mark_duplicates(ctx: RunContext) -> BatchReport:
    return S.mark_duplicates(ctx)


@task(name="validate-batch", **_RETRYING)
async def validate(ctx: RunContext, fps: Sequence[str]) -> BatchReport:
    return await S.validate(ctx, fps)


@task(name="scenario-batch", **_RETRYING)
async def scenarios(ctx: RunContext, fps: Sequence[str]) -> BatchReport:
    return await S.scenarios(ctx, fps)


@task(name="rollout-batch", **_RETRYING)
async def rollouts(ctx: RunContext, fps: Sequence[str]) -> BatchReport:
    return await S.rollouts(ctx, fps)
