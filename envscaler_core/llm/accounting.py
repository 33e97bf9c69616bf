"""Token and cost accounting per stage, and the run budget.

Cost comes from `LLMSettings.prices` (USD per million tokens): prompt tokens the provider served from
its prefix cache at the model's cached-input rate, the rest of the prompt at the input rate, the
completion at the output rate. A model without a price costs 0 and is warned about once, so a typo in
a model name is visible without flooding the log.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from typing import Any

from envscaler_core.config import BudgetSettings, Price
from envscaler_core.llm.errors import BudgetExceeded, LLMConfigError

log = logging.getLogger(__name__)
SETTLE_POLL_S = 0.02
"""How often a request held back by the in-flight requests' reservations looks again (`Ledger.admit`)."""

STAGE_KEYS = ("calls", "cached", "retries", "prompt_tokens", "cached_tokens", "completion_tokens", "estimated_tokens",
              "cost_usd")
"""`cached`: logical calls answered by our own response cache (no request sent). `cached_tokens`: of the
stage's `prompt_tokens`, how many the provider served from its prefix cache (sent, billed cheaper).
`estimated_tokens`: how many of the stage's prompt + completion tokens were estimated (~4 characters
per token) because the endpoint sent no `usage`; 0 means every count is the endpoint's own."""


class Ledger:
    """Thread-safe running totals; also enforces the budget before each paid call."""

    def __init__(self, prices: dict[str, Price], budget: BudgetSettings | None = None) -> None:
        self.prices = prices
        self.budget = budget
        self._lock = threading.Lock()
        self._stages: dict[str, dict[str, float]] = {}
        self._warned: set[str] = set()
        self.base_tokens = 0  # spent earlier in the same run (resume), from the store
        self.base_cost = 0.0
        self._held_tokens = 0  # reserved by requests on the wire (`admit`), until their answer is counted
        self._held_cost = 0.0

    def seed(self, usage: dict[str, dict[str, Any]]) -> None:
        """A resumed run starts with what it already spent (the store's `llm_usage` rows), so the
        budget spans the whole run."""
        for row in usage.values():
            tokens = row.get("tokens")
            if tokens is None:
                tokens = int(row.get("prompt_tokens", 0) or 0) + int(row.get("completion_tokens", 0) or 0)
            self.base_tokens += int(tokens or 0)
            self.base_cost += float(row.get("cost_usd", row.get("cost", 0.0)) or 0.0)

    def cost(self, model: str, prompt_tokens: int, completion_tokens: int, cached_tokens: int = 0) -> float:
        price = self.prices.get(model)
        if price is None:
            with self._lock:
                first = model not in self._warned
                self._warned.add(model)
            if first:
                log.warning("no price configured for model %r: its calls are counted at cost 0 "
                            "(add it under llm.prices)", model)
            return 0.0
        cached = min(cached_tokens, prompt_tokens)
        return ((prompt_tokens - cached) * price.input_per_mtok + cached * price.cached_rate
                + completion_tokens * price.output_per_mtok) / 1_000_000

    def add(self, stage: str, *, calls: int = 0, cached: bool = False, retries: int = 0, prompt_tokens: int = 0,
            completion_tokens: int = 0, cost_usd: float = 0.0, estimated_tokens: int = 0, cached_tokens: int = 0) -> None:
        """Tokens are added per HTTP response (so the budget sees repair turns as they happen);
        `calls` once per logical call."""
        with self._lock:
            row = self._stages.setdefault(stage, {k: 0 for k in STAGE_KEYS})
            row["calls"] += calls
            row["cached"] += int(cached)
            row["retries"] += retries
            row["prompt_tokens"] += prompt_tokens
            row["cached_tokens"] += cached_tokens
            row["completion_tokens"] += completion_tokens
            row["estimated_tokens"] += estimated_tokens
            row["cost_usd"] += cost_usd

    def totals(self) -> tuple[int, float]:
        with self._lock:
            tokens = sum(int(r["prompt_tokens"] + r["completion_tokens"]) for r in self._stages.values())
            cost = sum(r["cost_usd"] for r in self._stages.values())
        return tokens + self.base_tokens, cost + self.base_cost

    def check_budget(self) -> None:
        if self.budget is None:
            return
        tokens, cost = self.totals()
        if self.budget.max_tokens is not None and tokens >= self.budget.max_tokens:
            raise BudgetExceeded(f"LLM token budget spent: {tokens} >= budget.max_tokens={self.budget.max_tokens}; "
                                 "raise budget.max_tokens or resume the run with a larger budget")
        if self.budget.max_cost_usd is not None and cost >= self.budget.max_cost_usd:
            raise BudgetExceeded(f"LLM cost budget spent: ${cost:.4f} >= budget.max_cost_usd={self.budget.max_cost_usd}; "
                                 "raise budget.max_cost_usd or resume the run with a larger budget")

    async def admit(self, model: str, prompt_tokens: int) -> tuple[int, float]:
        """The budget check at the last moment before a request goes on the wire (after its wait for a
        concurrency slot and the rate limiter), which reserves the request's estimated prompt until
        `release`: an outside check found requests checked a second earlier, before those waits, sent
        after the cap was reached (34-56% over on small runs). Spent >= cap stops the run
        (`BudgetExceeded`); spent below it but spent + what requests in flight reserved at or over it
        waits for them to be counted, so only requests already in flight can take the run past the cap.
        A chat model without a price is refused under a cost budget, however it was named: its calls
        would cost 0 and the budget would never stop them (settings and `eval --model` refuse it first)."""
        budget = self.budget
        if budget is None:
            return 0, 0.0
        if budget.max_cost_usd is not None and prompt_tokens and model not in self.prices:
            raise LLMConfigError(f"budget.max_cost_usd={budget.max_cost_usd} cannot see the calls of model {model!r}: "
                                 f'it has no price; add [llm.prices."{model}"] or use budget.max_tokens')
        price = self.prices.get(model)
        cost = prompt_tokens * price.input_per_mtok / 1_000_000 if price is not None else 0.0
        while True:
            self.check_budget()
            tokens, spent = self.totals()
            with self._lock:
                over = ((budget.max_tokens is not None and tokens + self._held_tokens >= budget.max_tokens)
                        or (budget.max_cost_usd is not None and spent + self._held_cost >= budget.max_cost_usd))
                if not over or not (self._held_tokens or self._held_cost):
                    self._held_tokens += prompt_tokens
                    self._held_cost += cost
                    return prompt_tokens, cost
            await asyncio.sleep(SETTLE_POLL_S)

    def release(self, held: tuple[int, float]) -> None:
        """Give back what `admit` reserved, once the request's answer (or failure) is in."""
        with self._lock:
            self._held_tokens -= held[0]
            self._held_cost -= held[1]

    def by_stage(self) -> dict[str, dict[str, Any]]:
        with self._lock:
            return {
                stage: {k: (round(v, 10) if k == "cost_usd" else int(v)) for k, v in row.items()}
                for stage, row in self._stages.items()
            }
