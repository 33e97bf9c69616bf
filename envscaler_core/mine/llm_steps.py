"""Stage 1 LLM steps: stateful judgement and topic inference, one structured call per task.

Unlike the reference, a failed judgement is not a silent "not stateful": the task comes back with
`stateful=None` and the reason, and a failed topic inference is a `TopicResult` with `failure` set.
Results keep input order (the reference wrote completion order).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Protocol, TypeVar

from pydantic import BaseModel

from envscaler_core.llm.errors import LLMOutputInvalid
from envscaler_core.models.source import SourceTask
from envscaler_core.models.topic import EnvTopic
from envscaler_core.prompts.mine import INFER_TOPIC, JUDGE_STATEFUL, TaskInput

T = TypeVar("T")
R = TypeVar("R")


class Gateway(Protocol):
    """The part of `envscaler_core.llm.LLMGateway` Stages 1-2 use."""

    async def structured(self, prompt: Any, inp: Any, *, stage: str, **kw: Any) -> Any: ...

    async def embed(self, texts: list[str], *, stage: str = "embedding", **kw: Any) -> list[list[float]]: ...


class TopicResult(BaseModel):
    """The topic inferred for one task, or why none was."""

    task_fp: str
    task: str
    topic: EnvTopic | None = None
    failure: str | None = None



async def _bounded_map(items: Sequence[T], fn: Callable[[T], Awaitable[R]], concurrency: int | None) -> list[R]:
    """Run `fn` over items with at most `concurrency` in flight, results in input order."""
    limit = asyncio.Semaphore(concurrency or max(len(items), 1))

    async def one(item: T) -> R:
        async with limit:
            return await fn(item)

    return list(await asyncio.gather(*(one(item) for item in items)))


async def judge_tasks(
    tasks: Sequence[SourceTask], gateway: Gateway, *, concurrency: int | None = None
) -> list[SourceTask]:
    """Set `stateful` and `judge_reason` on each task; an invalid model answer leaves stateful=None."""

    async def judge(task: SourceTask) -> SourceTask:
        try:
            out = await gateway.structured(JUDGE_STATEFUL, TaskInput(task=task.text), stage="mine")
        except LLMOutputInvalid as exc:
            reason = getattr(exc, "reason", None) or str(exc)
            return task.model_copy(update={"stateful": None, "judge_reason": f"judgement failed: {reason}"})
        return task.model_copy(update={"stateful": bool(out.stateful), "judge_reason": out.analysis})

    return await _bounded_map(list(tasks), judge, concurrency)


async def infer_topics(
    tasks: Sequence[SourceTask], gateway: Gateway, *, concurrency: int | None = None
) -> list[TopicResult]:
    """Infer an EnvTopic per task (callers pass the stateful ones); failures carry their reason."""

    async def infer(task: SourceTask) -> TopicResult:
        base = {"task_fp": task.fingerprint, "task": task.text}
        try:
            out = await gateway.structured(INFER_TOPIC, TaskInput(task=task.text), stage="mine")
        except LLMOutputInvalid as exc:
            return TopicResult(**base, failure=f"topic inference failed: {getattr(exc, 'reason', None) or exc}")
        topic = EnvTopic(
            summary=out.summary.strip(),
            introduction=out.introduction.strip(),
            usefulness=out.usefulness,
            modelability=out.modelability,
            analysis=out.analysis,
            example_task=task.text,
            source_task_fp=task.fingerprint,
        )
        return TopicResult(**base, topic=topic)

    return await _bounded_map(list(tasks), infer, concurrency)
