"""Write-then-rename, so a reader (or a crash) never sees half an export file.

Each output is written to a hidden temp file in the *same directory* (rename is only atomic within a
file system), flushed and fsynced, then `os.replace`d over the final name. On any exception the temp
file is removed and a previous version of the file, if any, stays untouched.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

from envscaler_core.models.base import file_sha256


def temp_name(path: Path) -> Path:
    """Hidden sibling of `path` that a crash can leave behind; `.tmp-` marks it as garbage."""
    return path.with_name(f".{path.name}.tmp-{uuid.uuid4().hex[:12]}")


@contextmanager
def atomic_output(path: Path) -> Iterator[BinaryIO]:
    """Yield a binary file that becomes `path` only if the block finishes without an exception."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = temp_name(path)
    try:
        with open(tmp, "wb") as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


@contextmanager
def atomic_path(path: Path) -> Iterator[Path]:
    """Like `atomic_output`, for writers that want a path (pyarrow's ParquetWriter)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = temp_name(path)
    try:
        yield tmp
        if not tmp.is_file():
            raise FileNotFoundError(f"writer produced no file at {tmp}")
        with open(tmp, "rb") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


sha256_file = file_sha256  # the manifest's name for it
