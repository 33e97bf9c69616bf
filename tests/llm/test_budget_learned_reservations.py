"""Spec: what a request in flight reserves against the budget is learned from what the run's replies
really billed (the model's billed prompt per estimated prompt token, its mean completion), so an endpoint
that bills far more than the ~4 characters/token estimate, or long completions, cannot take a run past its
cap by more than about one request: an outside check (rt19-R5 F2) found such runs 17-90% over, requests
admitted on reservations of their estimated prompts alone. Scripted endpoint over HTTP (replies ~150 ms),
real gateway and `openai` client."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from envscaler_core.config import BudgetSettings
from envscaler_core.llm import BudgetExceeded
from tests.llm.helpers import chat_many, scripted_gateway as gateway
from tests.llm.scripted_endpoint import TRICKLE, completion

CONCURRENCY = 4
CALLS = 40
SIZE = 6000  # what each reply bills, whatever the prompt's size
CAP = 10 * SIZE + SIZE // 2


def _slow_reply(prompt_tokens: int, completion_tokens: int) -> dict[str, Any]:
    usage = {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
             "total_tokens": prompt_tokens + completion_tokens}
    return {**completion("done", usage=usage), TRICKLE: (0.05, 3)}


@pytest.mark.parametrize("prompt_tokens, completion_tokens", [(10, SIZE - 10), (SIZE - 1, 1)],
                         ids=["long-completions", "prompts-billed-far-above-the-estimate"])
def test_a_run_whose_replies_bill_more_than_their_estimate_passes_its_cap_by_at_most_one_request(
        endpoint: Any, prompt_tokens: int, completion_tokens: int) -> None:
    endpoint.script(_slow_reply(prompt_tokens, completion_tokens))
    gw = gateway(endpoint, budget=BudgetSettings(max_tokens=CAP), max_concurrency=CONCURRENCY)
    results = asyncio.run(chat_many(gw, [f"question {i}" for i in range(CALLS)]))
    assert any(isinstance(r, BudgetExceeded) for r in results)
    spent, _ = gw.ledger.totals()
    # before: reservations of the ~5-token estimate let ~14 requests out for a cap of 10.5
    assert spent < CAP + SIZE, (spent, len(endpoint.requests))
    assert len(endpoint.requests) == spent // SIZE


def test_a_models_requests_wait_for_its_first_counted_reply_so_a_first_wave_cannot_pass_the_cap(endpoint: Any) -> None:
    """Nothing is learned before the model's first reply is counted: a first wave of requests reserving their
    ~5-token estimates alone took 8 x SIZE for a cap of 2.5 x SIZE; the first one goes alone now."""
    endpoint.script(_slow_reply(10, SIZE - 10))
    cap = 2 * SIZE + SIZE // 2
    gw = gateway(endpoint, budget=BudgetSettings(max_tokens=cap), max_concurrency=8)
    results = asyncio.run(chat_many(gw, [f"question {i}" for i in range(CALLS)]))
    assert any(isinstance(r, BudgetExceeded) for r in results)
    spent, _ = gw.ledger.totals()
    assert spent < cap + SIZE, (spent, len(endpoint.requests))
