"""Shared base for every pipeline record: strict pydantic models with a content fingerprint.

The fingerprint is what makes stages idempotent and resumable: a record's identity is the sha256 of
the canonical JSON of its *content* fields, so re-running a stage on the same input yields the same
key and the store's upsert turns the second write into a no-op.
"""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict


def canonical_json(value: Any) -> str:
    """JSON with sorted keys and no whitespace: equal data gives equal text."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def compact_json(value: Any) -> str:
    """JSON without whitespace that keeps every object's key order. Stored records and exported states
    use it, not `canonical_json`: env code can observe the order (`list(self.books)`, `json.dumps` in a
    check), so sorting a scenario's state would change what its tools return and what its checks see."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=str)


def fingerprint_of(value: Any) -> str:
    """sha256 hex digest of the canonical JSON of `value`."""
    return hashlib.sha256(canonical_json(value).encode("utf-8")).hexdigest()


def file_sha256(path: Path | str, chunk: int = 1 << 20) -> str:
    """sha256 hex digest of a file's bytes, read in chunks (exports' manifest, a run's source files)."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(chunk):
            digest.update(block)
    return digest.hexdigest()


def utcnow() -> datetime:
    return datetime.now(UTC)


class Model(BaseModel):
    """Strict base: unknown fields are an error, not silently dropped."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class Record(Model):
    """A pipeline record with a content fingerprint.

    Subclasses list in `fingerprint_fields` the fields that define identity; bookkeeping fields
    (statuses, reasons, timings) stay out so that updating them does not change the key.
    """

    fingerprint_fields: ClassVar[tuple[str, ...]] = ()

    @property
    def fingerprint(self) -> str:
        fields = self.fingerprint_fields or tuple(type(self).model_fields)
        payload = {name: self.model_dump(mode="json", include={name}).get(name) for name in fields}
        return fingerprint_of({"kind": type(self).__name__, **payload})
