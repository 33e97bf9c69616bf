"""Stage 1 LLM steps: stateful judgement and topic inference, several tasks per structured call.

A source task alone makes a prompt of ~300 tokens, most of it the instructions: below providers'
1,024-token caching minimum, one task per request pays those instructions at the full input rate every
time. A batch (`batch` tasks, numbered) pays them once. A task the batch answer leaves out (or a batch
answer that is not valid at all) is asked again on its own, so batching never drops a task.

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
from envscaler_core.prompts.mine import (
    INFER_TOPIC, INFER_TOPIC_BATCH, JUDGE_STATEFUL, JUDGE_STATEFUL_BATCH, NumberedTask, TaskBatchInput, TaskInput,
)

DEFAULT_BATCH = 10

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


def _chunks(items: Sequence[T], size: int) -> list[list[T]]:
    size = max(1, size)
    return [list(items[i:i + size]) for i in range(0, len(items), size)]


async def _batched(tasks: Sequence[SourceTask], gateway: Gateway, prompt: Any, field: str,
                   single: Callable[[SourceTask], Awaitable[R]], answered: Callable[[SourceTask, Any], R],
                   batch: int, concurrency: int | None) -> list[R]:
    """Ask `prompt` about `batch` tasks at a time; each task the answer covers becomes `answered(task,
    item)`, every other one is asked on its own (`single`). Results in input order."""

    async def one_batch(chunk: list[SourceTask]) -> list[R]:
        if len(chunk) == 1:
            return [await single(chunk[0])]
        items: dict[int, Any] = {}
        try:
            out = await gateway.structured(prompt, TaskBatchInput(
                tasks=[NumberedTask(id=i + 1, task=t.text) for i, t in enumerate(chunk)]), stage="mine")
            for item in getattr(out, field):
                items.setdefault(item.id, item)  # a repeated id: the first answer counts
        except LLMOutputInvalid:
            pass  # every task of the chunk is asked on its own below, and fails there with its own reason
        missing = [i for i in range(len(chunk)) if i + 1 not in items]
        again = dict(zip(missing, await asyncio.gather(*(single(chunk[i]) for i in missing)), strict=True))
        return [again[i] if i in again else answered(t, items[i + 1]) for i, t in enumerate(chunk)]

    results = await _bounded_map(_chunks(list(tasks), batch), one_batch, concurrency)
    return [r for chunk in results for r in chunk]


async def judge_tasks(
    tasks: Sequence[SourceTask], gateway: Gateway, *, concurrency: int | None = None, batch: int = DEFAULT_BATCH
) -> list[SourceTask]:
    """Set `stateful` and `judge_reason` on each task; an invalid model answer leaves stateful=None."""

    async def judge(task: SourceTask) -> SourceTask:
        try:
            out = await gateway.structured(JUDGE_STATEFUL, TaskInput(task=task.text), stage="mine")
        except LLMOutputInvalid as exc:
            reason = getattr(exc, "reason", None) or str(exc)
            return task.model_copy(update={"stateful": None, "judge_reason": f"judgement failed: {reason}"})
        return task.model_copy(update={"stateful": bool(out.stateful), "judge_reason": out.analysis})

    def answered(task: SourceTask, item: Any) -> SourceTask:
        return task.model_copy(update={"stateful": bool(item.stateful), "judge_reason": item.analysis})

    return await _batched(tasks, gateway, JUDGE_STATEFUL_BATCH, "judgements", judge, answered, batch, concurrency)


async def infer_topics(
    tasks: Sequence[SourceTask], gateway: Gateway, *, concurrency: int | None = None, batch: int = DEFAULT_BATCH
) -> list[TopicResult]:
    """Infer an EnvTopic per task (callers pass the stateful ones); failures carry their reason."""

    async def infer(task: SourceTask) -> TopicResult:
        base = {"task_fp": task.fingerprint, "task": task.text}
        try:
            out = await gateway.structured(INFER_TOPIC, TaskInput(task=task.text), stage="mine")
        except LLMOutputInvalid as exc:
            return TopicResult(**base, failure=f"topic inference failed: {getattr(exc, 'reason', None) or exc}")
        return answered(task, out)

    def answered(task: SourceTask, out: Any) -> TopicResult:
        base = {"task_fp": task.fingerprint, "task": task.text}
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

    return await _batched(tasks, gateway, INFER_TOPIC_BATCH, "topics", infer, answered, batch, concurrency)
