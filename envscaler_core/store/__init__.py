"""Persistence for the factory: pipeline records, runs and the LLM call log/cache (DuckDB or PostgreSQL).

`Store.from_url(url)` is the entry point; the API and its guarantees are pinned in docs/CONTRACTS.md.
"""

from envscaler_core.store.errors import StoreError, StoreMissing
from envscaler_core.store.records import UpsertCounts
from envscaler_core.store.schema import RECORD_KINDS, SCHEMA_VERSION
from envscaler_core.store.store import Store

__all__ = ["RECORD_KINDS", "SCHEMA_VERSION", "Store", "StoreError", "StoreMissing", "UpsertCounts"]
