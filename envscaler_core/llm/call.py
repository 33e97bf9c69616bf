"""One logical gateway call: its bookkeeping (retries and repair turns folded in, the tokens and cost it
was billed, whether it holds a concurrency slot or is stopping with its run), the assistant turn a chat
call returns, and how calls still under way are stopped when the gateway closes."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel


@dataclass
class Call:
    """Bookkeeping for one logical call (retries and repair turns folded in)."""

    fingerprint: str
    stage: str
    model: str
    prompt_id: str | None
    retries: int = 0  # HTTP attempts beyond the first of each exchange
    repairs: int = 0
    prompt_tokens: int = 0
    cached_tokens: int = 0  # of prompt_tokens, served from the provider's prefix cache
    completion_tokens: int = 0
    estimated_tokens: int = 0  # of the tokens above, how many the endpoint did not report (estimated)
    cost_usd: float = 0.0
    started: float = 0.0
    holds_slot: bool = False  # a concurrency slot, held from the first answer until the row is durable
    stopping: bool = False  # cancelled (the run is stopping): an answer within the grace is recorded, then it ends
    recorded: bool = False
    blank_replies: int = 0  # empty or aborted replies in a row to requests sent with response_format
    format_note: str | None = None  # set once this call was asked without response_format for them (`structured_output`)

    def __post_init__(self) -> None:
        self.started = time.perf_counter()


class ChatReply(BaseModel):
    """An assistant turn: `message` is the OpenAI assistant dict (role, content, tool_calls)."""

    message: dict[str, Any]
    usage: dict[str, int]
    cached: bool = False
    usage_estimated: bool = False
    sent: dict[str, Any] | None = None  # the message as the endpoint sent it, for readers stricter than us


async def stop_and_wait(under_way: list[tuple[Call, "asyncio.Task[Any]"]], wait_s: float) -> None:
    """Stop each call no one stopped yet (cancelled, it enters the stop grace and records an answer that
    arrives in time) and wait for all of them, at most `wait_s`."""
    if not under_way:
        return
    for call, task in under_way:
        if not call.stopping:
            task.cancel()
    await asyncio.wait({task for _, task in under_way}, timeout=wait_s)
