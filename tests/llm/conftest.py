"""A small local mock for the gateway's HTTP-behaviour specs (faults, limits, errors).

Those specs are about retries and counters, not about what the model says, so the server here runs
a tiny handler instead of the library brain: `mine.judge_stateful` gets a valid judgement, an untagged
chat gets its last user line echoed, and a chat with tools gets one call of the first tool. The
structured/cache specs use the real brain through the session `mock_server` fixture.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator

import pytest

from envscaler_core.config import LLMSettings
from mock_llm.protocol import MockCannotAnswer, MockReply, MockRequest, MockToolCall
from mock_llm.server import MockServer
from tests.fixtures.llm import mock_llm_settings


def tiny_handler(req: MockRequest) -> MockReply:
    if req.prompt_id == "mine.judge_stateful":
        task = (req.payload or {}).get("task", "")
        return MockReply(content=json.dumps({"analysis": f"judged: {task}", "stateful": "order" in task}))
    if req.prompt_id is not None:
        raise MockCannotAnswer(f"tiny handler does not know prompt {req.prompt_id}")
    if req.tools:
        name = req.tools[0]["function"]["name"]
        return MockReply(tool_calls=[MockToolCall(name=name, arguments={"order_id": "o1"})])
    return MockReply(content=f"echo: {req.messages[-1].get('content')}")


def tiny_embedding(text: str) -> list[float]:
    digest = hashlib.sha256(text.encode()).digest()
    return [b / 255.0 for b in digest[:8]]


@pytest.fixture(scope="session")
def tiny_server() -> Iterator[MockServer]:
    with MockServer(tiny_handler, embedder=tiny_embedding) as server:
        yield server


@pytest.fixture
def mock(tiny_server: MockServer) -> Iterator[MockServer]:
    """The tiny-handler server with zeroed counters and no faults."""
    tiny_server.reset()
    yield tiny_server
    tiny_server.reset()


@pytest.fixture
def settings(mock: MockServer) -> LLMSettings:
    return mock_llm_settings(mock.base_url)


from tests.llm.scripted_endpoint import endpoint, scripted_endpoint_server  # noqa: E402,F401  (fixtures)


@pytest.fixture
def store(tmp_path):  # type: ignore[no-untyped-def]
    """A real DuckDB store for the gateway's audit rows (a spec may define its own)."""
    from envscaler_core.store import Store

    with Store.from_url(f"duckdb:///{tmp_path / 'gateway.duckdb'}") as s:
        yield s
