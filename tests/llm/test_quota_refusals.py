"""Spec: an account out of quota or credit (OpenAI's 429 `insufficient_quota`, a 402 from OpenRouter or
DeepSeek) is not retried: the run stops once, saying it is about the account's quota or billing (an
outside check: it was retried `max_retries` times, then "raise llm.max_retries / llm.timeout_s"). A rate
limit that only mentions a quota is still retried. Scripted local endpoint, real gateway and `openai` client."""

from __future__ import annotations

import json

import pytest

from envscaler_core.llm import LLMRequestRejected
from tests.llm.helpers import scripted_gateway as gateway
from tests.llm.scripted_endpoint import RAW, STATUS, completion

USER = [{"role": "user", "content": "cancel order 4"}]



QUOTA = {
    "openai-insufficient-quota": {STATUS: 429, "error": {
        "message": "You exceeded your current quota, please check your plan and billing details.",
        "type": "insufficient_quota", "param": None, "code": "insufficient_quota"}},
    "openrouter-402": {STATUS: 402, "error": {"code": 402, "message": "Insufficient credits. Add more using "
                                              "https://openrouter.ai/settings/credits"}},
    "deepseek-402": {STATUS: 402, "error": {"message": "Insufficient Balance", "type": "unknown_error"}},
    # a second outside check: said "the request itself is wrong" and "check the key's permissions"
    "anthropic-400-credit": {STATUS: 400, "error": {"type": "invalid_request_error", "message": "Your credit balance is "
                             "too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase "
                             "credits."}},
    "azure-403-volume": {STATUS: 403, "error": {"code": "403", "message": "Out of call volume quota for OpenAI S0 "
                         "pricing tier. Please retry after 2 days."}},
}


@pytest.mark.parametrize("name", QUOTA)
def test_an_account_out_of_quota_or_credit_stops_once_saying_so(endpoint, name) -> None:
    """Before: retried `max_retries` times, then "retry later or raise llm.max_retries / llm.timeout_s"."""
    endpoint.script(QUOTA[name])
    with pytest.raises(LLMRequestRejected) as err:
        gateway(endpoint).chat_sync(USER, stage="agent")
    message = str(err.value)
    assert len(endpoint.requests) == 1 and "quota or credit" in message and "max_retries" not in message
    assert QUOTA[name]["error"]["message"][:20] in message


def test_a_rate_limit_worded_as_a_quota_is_still_retried(endpoint) -> None:
    """Gemini's per-minute limit says "exceeded your current quota ... billing details" with a retry delay."""
    window = {STATUS: 429, RAW: json.dumps([{"error": {
        "code": 429, "message": "You exceeded your current quota, please check your plan and billing details. * Quota "
        "exceeded for metric: generate_content_free_tier_requests, limit: 10", "status": "RESOURCE_EXHAUSTED"}}])}
    endpoint.script(window, completion("Order 4 is cancelled."))
    assert gateway(endpoint).chat_sync(USER, stage="agent").message["content"] == "Order 4 is cancelled."
    assert len(endpoint.requests) == 2
