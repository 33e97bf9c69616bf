"""The audit (and cache) record of one LLM request."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import Field

from envscaler_core.models.base import Model, utcnow

LLMCallStatus = Literal["ok", "cached", "error", "output_invalid"]


class LLMCall(Model):
    """One logical call through the gateway (retries folded in, counted in `attempts`)."""

    fingerprint: str = Field(description="Cache key: model, messages, tools, sampling, prompt version.")
    run_id: str | None = None
    stage: str
    prompt_id: str | None = None
    model: str
    status: LLMCallStatus
    attempts: int = Field(default=1, ge=0, description="HTTP attempts, retries included (0 = cache).")
    repairs: int = Field(default=0, ge=0, description="Structured-output repair turns.")
    prompt_tokens: int = 0
    cached_tokens: int = Field(default=0, ge=0, description=(
        "Of prompt_tokens, how many the provider served from its prefix cache (billed at the cached rate)."))
    completion_tokens: int = 0
    estimated_tokens: int = Field(default=0, ge=0, description=(
        "Of prompt + completion tokens, how many were estimated because the endpoint sent no usage."))
    cost_usd: float = 0.0
    latency_ms: float = 0.0
    error: str | None = None
    response: dict[str, Any] | None = Field(default=None, description="The assistant message, for the cache.")
    shared: bool = Field(default=True, description=(
        "Whether another run's cache lookup may be served this answer: False when it was paid for with "
        "llm.cache off (it still counts for audit, cost and its own run's resume)."))
    created_at: datetime = Field(default_factory=utcnow)

    @property
    def usage_estimated(self) -> bool:
        """True when some of this call's token counts are estimates, not the endpoint's report."""
        return self.estimated_tokens > 0
