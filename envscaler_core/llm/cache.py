"""The response cache key and the store seam the gateway persists through.

An identical request is never paid twice: the key is the sha256 of the canonical JSON of everything
that determines the answer (endpoint kind, model, messages, tools, sampling parameters and the prompt
`id@version`, so editing a prompt invalidates its answers). The store keeps it across runs (resume);
without a store an in-process dict still dedups. Which stored answer is served: `Store.cached_responses`
(the first usable one recorded; a run with `llm.cache` off feeds no other run).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from typing import Any, Protocol

from envscaler_core.models.base import fingerprint_of
from envscaler_core.models.llm import LLMCall


class CallStore(Protocol):
    """The slice of `envscaler_core.store.Store` the gateway needs."""

    def cached_response(self, fingerprint: str, run_id: str | None = None) -> dict[str, Any] | None: ...
    # (`Store.cached_responses`, every answer the cache may serve in the order it tries them, is used
    # when the store has it)

    def record_llm_call(self, call: LLMCall) -> None: ...


def request_fingerprint(kind: str, model: str, messages: Any, tools: Any, sampling: dict[str, Any],
                        prompt_tag: str | None) -> str:
    """Cache key of one logical request (`kind` is "chat", "structured" or "embed")."""
    return fingerprint_of({
        "kind": kind, "model": model, "messages": messages, "tools": tools or None,
        "sampling": sampling, "prompt": prompt_tag,
    })


def body_key(extra_body: dict[str, Any]) -> dict[str, Any]:
    """What `llm.extra_body` adds to a request's cache key: its fields (they change the answers:
    `enable_thinking`, a chat template's kwargs), secrets left out (a new token does not; see
    `secret_fields`). Nothing when it is empty, so the keys of requests without it stay as they were.
    Before, an outside check's re-run with `enable_thinking` true got all 210 answers made with it false
    from the cache."""
    from envscaler_core.secret_fields import masked

    return {"extra_body": masked(extra_body)} if extra_body else {}


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


class KnownAnswers:
    """Which fingerprints the store held an answer for when this process first asked: a lookup whose
    fingerprint is not among them skips the database.

    On a fresh run nearly every lookup misses, and each miss was a query on the store's connection
    pool, taken in a worker thread (5 ms of CPU, ~16 ms wall on the shared 2-core box; 64 requests
    landing at once queued ~1.4 s behind each other and behind sandbox calls in the same executor).
    The set is read once (one index scan), kept as 64-bit fingerprint prefixes (a false positive only
    costs the query it would have cost anyway), and answers this process records itself are served
    by the gateway's memory cache. What it does not see: rows another process commits after the set
    was read (a concurrent shard asking the identical request). Two shards racing on one request
    could already both miss before; a resumed run is a new process and reads the set afresh, so
    resume still repeats no paid call."""

    def __init__(self, load: Callable[[], Iterable[str]]) -> None:
        self._load = load
        self._lock = threading.Lock()
        self._prefixes: set[int] | None = None

    @staticmethod
    def _prefix(fingerprint: str) -> int | None:
        try:
            return int(fingerprint[:16], 16)
        except ValueError:
            return None

    def ensure_loaded(self) -> None:
        """Read the set once (blocking; call it from a worker thread)."""
        with self._lock:
            if self._prefixes is None:
                self._prefixes = {p for fp in self._load() if (p := self._prefix(fp)) is not None}

    @property
    def loaded(self) -> bool:
        return self._prefixes is not None

    def may_have(self, fingerprint: str) -> bool:
        """False only when the store certainly had no answer for `fingerprint` when the set was read."""
        prefix = self._prefix(fingerprint)
        return self._prefixes is None or prefix is None or prefix in self._prefixes
