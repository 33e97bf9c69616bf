"""Spec (outside check rt20-R7 F3): once `LLMGateway.settle` returns, the store holds every call the gateway
had under way; a run's summary, read from the store right after it, then counts them. A call no one awaits
any more (the sibling of a synth method whose `gather` failed on the budget) used to be recorded only when
the gateway closed, after the summary: the summary of a budget-stopped run lacked it. Scripted endpoint over
HTTP (a slow reply), the real gateway and `openai` client, a real DuckDB store with its journal."""

from __future__ import annotations

import asyncio
from typing import Any

from tests.llm.helpers import scripted_gateway
from tests.llm.scripted_endpoint import TRICKLE, completion

USER = [{"role": "user", "content": "cancel order 4"}]


def test_a_call_no_one_awaits_is_in_the_store_once_the_gateway_settles(endpoint: Any, store: Any) -> None:
    endpoint.script({**completion("done"), TRICKLE: (0.1, 15)})  # answered ~1.5 s after it is asked
    gw = scripted_gateway(endpoint, store)

    async def orphan_then_settle() -> dict[str, Any]:
        orphan = asyncio.ensure_future(gw.chat(USER, stage="synth"))  # on the wire, awaited by no one
        await asyncio.sleep(0.5)
        try:
            await gw.settle()
            return store.llm_usage("r1")
        finally:
            await gw.aclose()
            orphan.cancel()

    usage = asyncio.run(orphan_then_settle())
    assert usage.get("synth", {}).get("calls") == 1, usage
    assert usage["synth"]["prompt_tokens"] == gw.usage_by_stage()["synth"]["prompt_tokens"] > 0
