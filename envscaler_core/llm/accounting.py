"""Token and cost accounting per stage, and the run budget.

Cost comes from `LLMSettings.prices` (USD per million tokens): prompt tokens the provider served from
its prefix cache at the model's cached-input rate, the rest of the prompt at the input rate, the
completion at the output rate. A model without a price costs 0 and is warned about once, so a typo in
a model name is visible without flooding the log.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from envscaler_core.config import BudgetSettings, Price
from envscaler_core.llm.errors import BudgetExceeded

log = logging.getLogger(__name__)

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

    def by_stage(self) -> dict[str, dict[str, Any]]:
        with self._lock:
            return {
                stage: {k: (round(v, 10) if k == "cost_usd" else int(v)) for k, v in row.items()}
                for stage, row in self._stages.items()
            }
