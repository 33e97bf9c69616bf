"""Spec: a call whose refused attempt was billed (a 200 with `choices: []` and `usage`) records what it
billed on one `error` row, whatever way it then ends without an answer: the budget refusing its retry, a
cancellation while the retry waits (for the rate limiter, a slot, the in-flight reservations). An outside
check (rt19-R5 F1) found such calls left no row at all after a budget stop: the store, `status` and a
resume's budget missed 7-21% of what the endpoint billed. Scripted endpoint over HTTP, real gateway and
`openai` client, real Store."""

from __future__ import annotations

import asyncio

import pytest

from envscaler_core.config import BudgetSettings
from envscaler_core.llm import BudgetExceeded
from tests.llm.helpers import call_rows, scripted_gateway as gateway, stop_after_first_attempt
from tests.llm.scripted_endpoint import completion

USER = [{"role": "user", "content": "cancel order 4"}]
BILLED_EMPTY = {"id": "x", "object": "chat.completion", "created": 0, "model": "m", "choices": [],
                "usage": {"prompt_tokens": 600, "completion_tokens": 0, "total_tokens": 600}}


def test_a_retry_the_budget_refuses_leaves_an_error_row_with_what_the_refused_try_billed(endpoint, store) -> None:
    endpoint.script(BILLED_EMPTY, completion("done"))
    gw = gateway(endpoint, store, budget=BudgetSettings(max_tokens=500))
    with pytest.raises(BudgetExceeded, match="600 >= budget.max_tokens=500"):
        gw.chat_sync(USER)
    [row] = call_rows(store, "r1")
    assert (row["status"], row["prompt_tokens"], row["completion_tokens"]) == ("error", 600, 0)
    assert "budget.max_tokens=500" in row["error"]
    assert len(endpoint.requests) == 1


def test_a_call_cancelled_while_its_retry_waits_for_the_rate_limiter_records_what_it_billed(endpoint, store) -> None:
    endpoint.script(BILLED_EMPTY, completion("done"))
    gw = gateway(endpoint, store, requests_per_minute=20)  # the retry waits ~3 s for its turn

    asyncio.run(stop_after_first_attempt(gw, endpoint, USER, 0.3))
    [row] = call_rows(store, "r1")
    assert (row["status"], row["prompt_tokens"]) == ("error", 600)
    assert len(endpoint.requests) == 1
