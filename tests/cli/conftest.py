"""Fixtures of the CLI specs."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from mock_llm.http_state import FaultConfig
from mock_llm.server import MockServer


@pytest.fixture(scope="module")
def slow_mock() -> Iterator[MockServer]:
    """A mock of its own, answering after 1.5 s, so a command is still working when a signal comes."""
    with MockServer(faults=FaultConfig(latency_ms=1500)) as server:
        yield server
