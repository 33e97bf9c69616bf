"""A gateway on a scripted endpoint, its audit rows read back out of a real Store (read-only SQL), and the
ways specs drive its calls (many at once; one stopped after its first attempt)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from sqlalchemy import text

from envscaler_core.llm import LLMGateway
from tests.fixtures.llm import mock_llm_settings

COLUMNS = "stage, prompt_id, model, status, attempts, repairs, prompt_tokens, completion_tokens, cost_usd, error"


def call_rows(store: Any, run_id: str) -> list[dict[str, Any]]:
    """The run's LLM call rows, oldest first."""
    with store.engine.connect() as conn:
        result = conn.execute(
            text(f"SELECT {COLUMNS} FROM llm_calls WHERE run_id = :run ORDER BY created_at, call_id"),
            {"run": run_id},
        )
        return [dict(row._mapping) for row in result]


def scripted_gateway(endpoint: Any, store: Any = None, budget: Any = None, **overrides: Any) -> LLMGateway:
    """A gateway on a scripted endpoint (`tests/llm/scripted_endpoint.py`): no response cache, backoff of
    milliseconds (each overridable); its calls are audited under run "r1" when it has a store."""
    settings = mock_llm_settings(endpoint.base_url, **{"cache": False, "backoff_base_s": 0.01, "backoff_max_s": 0.05,
                                                       **overrides})
    return LLMGateway(settings, store=store, run_id="r1" if store is not None else None, budget=budget)


async def chat_many(gw: LLMGateway, contents: list[str]) -> list[Any]:
    """One chat call per user message, all at once; their results or errors in order, the gateway closed."""
    calls = [gw.chat([{"role": "user", "content": content}]) for content in contents]
    try:
        return await asyncio.gather(*calls, return_exceptions=True)
    finally:
        await gw.aclose()


async def stop_after_first_attempt(gw: LLMGateway, endpoint: Any, messages: list[dict[str, Any]], settle_s: float) -> None:
    """Start a chat call, wait until the endpoint has its first attempt (a loaded machine can take seconds)
    and `settle_s` more (its refusal read, the call waiting to ask again), cancel it, see it end cancelled,
    and close the gateway: a run stopping while the call waits."""
    call = asyncio.ensure_future(gw.chat(messages))
    for _ in range(200):
        if endpoint.requests:
            break
        await asyncio.sleep(0.05)
    await asyncio.sleep(settle_s)
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    await gw.aclose()
