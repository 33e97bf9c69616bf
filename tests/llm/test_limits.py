"""Client-side limits: the concurrency cap, the per-minute pacer, and use from several event loops."""

from __future__ import annotations

import asyncio
import threading
import time

from envscaler_core.llm import LLMGateway
from tests.fixtures.llm import mock_llm_settings


def _ask_many(gw: LLMGateway, n: int) -> list[str]:
    async def run() -> list[str]:
        replies = await asyncio.gather(*(gw.chat([{"role": "user", "content": f"q{i}"}]) for i in range(n)))
        return [r.message["content"] for r in replies]

    return asyncio.run(run())


def test_in_flight_requests_never_exceed_the_cap(mock) -> None:
    mock.set_faults(latency_ms=50)
    gw = LLMGateway(mock_llm_settings(mock.base_url, max_concurrency=4))
    assert _ask_many(gw, 16) == [f"echo: q{i}" for i in range(16)]
    stats = mock.stats()
    assert stats["requests_total"] == 16
    assert 2 <= stats["max_in_flight"] <= 4


def test_the_pacer_spaces_requests_by_sixty_over_rpm(mock) -> None:
    gw = LLMGateway(mock_llm_settings(mock.base_url, requests_per_minute=600))  # one per 0.1 s
    started = time.perf_counter()
    _ask_many(gw, 5)
    assert time.perf_counter() - started >= 0.4  # 4 gaps of 0.1 s, whatever the concurrency


def test_one_gateway_serves_successive_event_loops_and_threads(mock) -> None:
    gw = LLMGateway(mock_llm_settings(mock.base_url, max_concurrency=2))
    assert _ask_many(gw, 3) == ["echo: q0", "echo: q1", "echo: q2"]
    assert gw.chat_sync([{"role": "user", "content": "sync"}]).message["content"] == "echo: sync"
    results: list[list[str]] = []
    threads = [threading.Thread(target=lambda: results.append(_ask_many(gw, 3))) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 3 and all(r == ["echo: q0", "echo: q1", "echo: q2"] for r in results)
