"""Bookkeeping for one logical gateway call: its retries and repair turns folded in, the tokens and cost
it was billed, and whether it still holds a concurrency slot or is stopping with its run."""

from __future__ import annotations

import time
from dataclasses import dataclass


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

    def __post_init__(self) -> None:
        self.started = time.perf_counter()
