"""The one exception the store raises for bad input and backend failures."""

from __future__ import annotations


class StoreError(RuntimeError):
    """A store problem phrased as one line: what failed, on which database, and (when we know it) what
    to do about it. The backend's own exception is kept as `__cause__` for debugging."""


class StoreMissing(StoreError):
    """A read-only verb asked for a store that does not exist yet (nothing is created for it)."""
