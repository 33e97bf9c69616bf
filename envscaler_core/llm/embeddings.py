"""Reading an embeddings answer as sent by real servers, not only as the SDK's types promise.

The SDK builds its response object without validating it, so whatever the server sent arrives here:
vectors as base64 (servers that ignore `encoding_format`), items without `index`, missing or null
vectors, strings or NaN inside a vector. A wrong vector would silently corrupt topic dedup and
selection, so anything but one finite float vector per text, all of one width, is refused with a
message saying what was wrong."""

from __future__ import annotations

import base64
import binascii
import math
from typing import Any

import numpy as np


class EmbeddingsInvalid(ValueError):
    """The body is not one usable vector per text; the message says what is wrong."""


def _field(item: Any, name: str) -> Any:
    return item.get(name) if isinstance(item, dict) else getattr(item, name, None)


def _vector(raw: Any, position: int) -> list[float]:
    if isinstance(raw, str):  # base64 of little-endian float32, OpenAI's `encoding_format=base64`
        try:
            values = np.frombuffer(base64.b64decode(raw, validate=True), dtype="<f4").astype(float).tolist()
        except (binascii.Error, ValueError):
            raise EmbeddingsInvalid(f"item {position}: embedding is a string that is not base64 float32") from None
    elif isinstance(raw, list | tuple):
        if not all(isinstance(v, int | float) and not isinstance(v, bool) for v in raw):
            raise EmbeddingsInvalid(f"item {position}: embedding holds a value that is not a number")
        values = [float(v) for v in raw]
    else:
        raise EmbeddingsInvalid(f"item {position}: embedding is {type(raw).__name__}, not a list of numbers")
    if not values:
        raise EmbeddingsInvalid(f"item {position}: embedding is empty")
    if not all(math.isfinite(v) for v in values):
        raise EmbeddingsInvalid(f"item {position}: embedding holds NaN or infinity")
    return values


def read_vectors(resp: Any, expected: int) -> list[list[float]]:
    """One vector per input text, in input order (by `index` when every item has one)."""
    data = _field(resp, "data")
    if not isinstance(data, list):
        raise EmbeddingsInvalid(f"'data' is {type(data).__name__}, not a list of embeddings")
    if len(data) != expected:
        raise EmbeddingsInvalid(f"{len(data)} embeddings for {expected} texts")
    indexes = [_field(item, "index") for item in data]
    if all(isinstance(i, int) for i in indexes):
        if sorted(indexes) != list(range(expected)):
            raise EmbeddingsInvalid(f"indexes {sorted(indexes)[:8]}... are not 0..{expected - 1}")
        data = [item for _, item in sorted(zip(indexes, data), key=lambda pair: pair[0])]
    vectors = [_vector(_field(item, "embedding"), n) for n, item in enumerate(data)]
    widths = {len(v) for v in vectors}
    if len(widths) > 1:
        raise EmbeddingsInvalid(f"vectors of different widths {sorted(widths)}")
    return vectors
