"""A sandbox pool that can run BFCL's API classes (the package copied into the jail, preloaded)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from envscaler_core.bfcl.package import jail_imports
from envscaler_core.config import SandboxSettings
from sandbox import JailImports, SandboxPool


@pytest.fixture(scope="session")
def bfcl_pool() -> Iterator[SandboxPool]:
    pool = SandboxPool(SandboxSettings(workers=2), imports=JailImports(**jail_imports()))
    try:
        yield pool
    finally:
        pool.close()
