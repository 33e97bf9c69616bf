"""Spec: the context-limit 400s of Cohere, xAI and a plain "input length" wording refuse that one prompt
(the item fails, the run goes on), through the real gateway and `openai` client against a scripted
endpoint. Before, each was "the request itself is wrong" and stopped the whole run (an outside check)."""

from __future__ import annotations

import pytest

from envscaler_core.llm.errors import LLMPromptRefused
from tests.llm.helpers import call_rows, scripted_gateway as gateway
from tests.llm.scripted_endpoint import STATUS

USER = [{"role": "user", "content": "cancel order 4"}]
CONTEXT_LIMITS = {
    "cohere": "too many tokens: total number of tokens in the prompt cannot exceed 4081 - received 5000",
    "xai": "This model's maximum prompt length is 131072 but the request contains 140000 tokens.",
    "input-length": "input length exceeds the maximum length of the model",
}


@pytest.mark.parametrize("message", CONTEXT_LIMITS.values(), ids=CONTEXT_LIMITS.keys())
def test_a_context_limit_in_these_words_fails_that_item_not_the_run(endpoint, store, message) -> None:
    endpoint.script({STATUS: 400, "error": {"message": message, "type": "invalid_request_error", "code": None}})
    with pytest.raises(LLMPromptRefused, match="this item fails"):
        gateway(endpoint, store=store).chat_sync(USER)
    assert len(endpoint.requests) == 1
    assert [row["status"] for row in call_rows(store, "r1")] == ["error"]
