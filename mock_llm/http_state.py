"""The mock server's mutable state: fault settings, the scripted fault queue, and request counters.

Faults exist so the gateway's retry/repair/limit machinery can be proven over real HTTP. Each model
request (chat completion or embedding) takes the next entry of the `script` queue if there is one,
else draws from the probabilities; so a test can say "429 then success" exactly, and a soak run can
say "5% 500s" statistically.
"""

from __future__ import annotations

import random
from collections import Counter, deque
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from mock_llm.realism import RealismConfig

FaultKind = Literal["ok", "429", "500", "timeout", "malformed"]


class FaultConfig(BaseModel):
    """What the mock does wrong, and how slowly. All probabilities are per model request."""

    model_config = ConfigDict(extra="forbid")

    p_429: float = Field(default=0.0, ge=0, le=1)
    p_500: float = Field(default=0.0, ge=0, le=1)
    p_timeout: float = Field(default=0.0, ge=0, le=1)
    p_malformed: float = Field(default=0.0, ge=0, le=1)
    latency_ms: float = Field(default=0.0, ge=0, description="Added before every model response.")
    latency_jitter_ms: float = Field(default=0.0, ge=0, description="Uniform extra latency in [0, jitter].")
    retry_after_s: float = Field(default=1.0, ge=0, description="Advertised on 429s (Retry-After header).")
    retry_after_ms_header: bool = Field(default=False, description="Advertise via retry-after-ms instead.")
    timeout_s: float = Field(default=30.0, gt=0, description="How long a 'timeout' fault stalls.")
    seed: int | None = None
    script: list[FaultKind] = Field(default_factory=list, description="Consumed first, one entry per request.")


class MockState:
    """Faults + counters. Only touched from the server's event loop, so no locking is needed."""

    def __init__(self, faults: FaultConfig | None = None, realism: RealismConfig | None = None) -> None:
        self.initial = faults or FaultConfig()
        self.initial_realism = realism or RealismConfig()
        self.reset()

    def reset(self) -> None:
        self.realism = self.initial_realism.model_copy(deep=True)
        self.forms_used: Counter[str] = Counter()
        self.faults = self.initial.model_copy(deep=True)
        self.script: deque[FaultKind] = deque(self.faults.script)
        self.rng = random.Random(self.faults.seed)
        self.requests_total = 0
        self.by_path: Counter[str] = Counter()
        self.by_prompt: Counter[str] = Counter()
        self.by_status: Counter[str] = Counter()
        self.faults_injected: Counter[str] = Counter()
        self.embedding_requests = 0
        self.embeddings = 0
        self.prompt_tokens = 0  # chat prompt tokens answered, and how many the prefix cache served
        self.cached_tokens = 0
        self.in_flight = 0
        self.max_in_flight = 0

    def update_faults(self, changes: dict[str, Any]) -> FaultConfig:
        """Merge `changes` into the live config; a given `script` replaces the queue."""
        merged = FaultConfig.model_validate({**self.faults.model_dump(), **changes})
        self.faults = merged
        if "script" in changes:
            self.script = deque(merged.script)
        if "seed" in changes:
            self.rng = random.Random(merged.seed)
        return merged

    def next_fault(self) -> FaultKind:
        if self.script:
            kind = self.script.popleft()
        else:
            f, roll = self.faults, self.rng.random()
            kind = "ok"
            edge = 0.0
            for name, p in (("429", f.p_429), ("500", f.p_500), ("timeout", f.p_timeout), ("malformed", f.p_malformed)):
                edge += p
                if roll < edge:
                    kind = name  # type: ignore[assignment]
                    break
        if kind != "ok":
            self.faults_injected[kind] += 1
        return kind

    def latency_s(self) -> float:
        f = self.faults
        jitter = self.rng.uniform(0.0, f.latency_jitter_ms) if f.latency_jitter_ms else 0.0
        return (f.latency_ms + jitter) / 1000.0

    def enter(self, path: str) -> None:
        self.requests_total += 1
        self.by_path[path] += 1
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)

    def leave(self, status: int) -> None:
        self.in_flight -= 1
        self.by_status[str(status)] += 1

    def snapshot(self) -> dict[str, Any]:
        return {
            "mock": True,
            "requests_total": self.requests_total,
            "by_path": dict(self.by_path),
            "by_prompt": dict(self.by_prompt),
            "by_status": dict(self.by_status),
            "faults_injected": dict(self.faults_injected),
            "embedding_requests": self.embedding_requests,
            "embeddings": self.embeddings,
            "prompt_tokens": self.prompt_tokens,
            "cached_tokens": self.cached_tokens,
            "in_flight": self.in_flight,
            "max_in_flight": self.max_in_flight,
            "faults": self.faults.model_dump(exclude={"script"}),
            "realism": self.realism.model_dump(),
            "forms_used": dict(self.forms_used),
            "script_remaining": list(self.script),
        }
