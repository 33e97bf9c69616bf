"""The response cache key and the store seam the gateway persists through.

An identical request is never paid twice: the key is the sha256 of the canonical JSON of everything
that determines the answer (endpoint kind, model, messages, tools, sampling parameters and the prompt
`id@version`, so editing a prompt invalidates its answers). The store keeps it across runs (resume);
without a store an in-process dict still dedups.
"""

from __future__ import annotations

import threading
from typing import Any, Protocol

from envscaler_core.models.base import fingerprint_of
from envscaler_core.models.llm import LLMCall


class CallStore(Protocol):
    """The slice of `envscaler_core.store.Store` the gateway needs."""

    def cached_response(self, fingerprint: str) -> dict[str, Any] | None: ...

    def record_llm_call(self, call: LLMCall) -> None: ...


def request_fingerprint(kind: str, model: str, messages: Any, tools: Any, sampling: dict[str, Any],
                        prompt_tag: str | None) -> str:
    """Cache key of one logical request (`kind` is "chat", "structured" or "embed")."""
    return fingerprint_of({
        "kind": kind, "model": model, "messages": messages, "tools": tools or None,
        "sampling": sampling, "prompt": prompt_tag,
    })


class MemoryCache:
    """Process-local fingerprint -> response map (thread-safe; no eviction, a run's answers are small)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._data: dict[str, dict[str, Any]] = {}

    def get(self, fingerprint: str) -> dict[str, Any] | None:
        with self._lock:
            return self._data.get(fingerprint)

    def put(self, fingerprint: str, response: dict[str, Any]) -> None:
        with self._lock:
            self._data[fingerprint] = response
