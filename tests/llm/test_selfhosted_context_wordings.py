"""Spec: every self-hosted server's context-overflow wording (`context_wordings.CONTEXT_WORDINGS`, one row per
server and version) refuses that one prompt: the item fails, the run goes on, nothing is retried. Through the
real gateway and `openai` client against a scripted endpoint that answers with each server's own body shape.
Before, vLLM's "decoder prompt (length N) is longer than the maximum model length" and "Input length (N tokens)
exceeds the maximum allowed length" stopped the whole run as "the request itself is wrong" (an outside check)."""

from __future__ import annotations

import pytest

from envscaler_core.llm.context_wordings import CONTEXT_WORDINGS
from envscaler_core.llm.errors import LLMPromptRefused
from tests.llm.helpers import call_rows, scripted_gateway as gateway
from tests.llm.scripted_endpoint import STATUS

USER = [{"role": "user", "content": "cancel order 4"}]


def _vllm_body(message: str) -> dict:
    """vLLM's and SGLang's error shape: a top-level `message` beside `object: error`."""
    return {STATUS: 400, "object": "error", "message": message, "type": "BadRequestError", "param": None, "code": 400}


@pytest.mark.parametrize("row", CONTEXT_WORDINGS, ids=[f"{r.server}:{r.example[:30]}" for r in CONTEXT_WORDINGS])
def test_each_servers_context_overflow_fails_that_item_not_the_run(endpoint, store, row) -> None:
    endpoint.script(_vllm_body(row.example))
    with pytest.raises(LLMPromptRefused, match="this item fails"):
        gateway(endpoint, store=store).chat_sync(USER)
    assert len(endpoint.requests) == 1
    assert [r["status"] for r in call_rows(store, "r1")] == ["error"]


@pytest.mark.parametrize("message", [
    "The decoder prompt (length 131073) is longer than the maximum model length of 131072.",
    "Prompt length of 9 is longer than the maximum model length of 8.",
    "Input length (70000 tokens) exceeds the maximum allowed length (65536 tokens).",
    "The input (33000 tokens) is longer than the model's context length (32768 tokens).",
])
def test_other_figures_between_the_words_still_read_as_the_prompt(endpoint, message) -> None:
    endpoint.script(_vllm_body(message))
    with pytest.raises(LLMPromptRefused):
        gateway(endpoint).chat_sync(USER)


def test_lm_studio_says_it_as_a_bare_string(endpoint) -> None:
    endpoint.script({STATUS: 400, "error": next(r.example for r in CONTEXT_WORDINGS if r.server.startswith("LM Studio"))})
    with pytest.raises(LLMPromptRefused, match="this item fails"):
        gateway(endpoint).chat_sync(USER)


@pytest.mark.parametrize("message", ["context shift is disabled", "Context size has been exceeded."])
def test_llama_cpps_generation_time_500s_fail_that_item_not_the_run(endpoint, store, message) -> None:
    """llama.cpp (run without context shift) says the prompt plus the reply reached the context as HTTP 500:
    before, retried seven times, then the whole run stopped with "retry later"."""
    endpoint.script({STATUS: 500, "error": {"code": 500, "message": message, "type": "server_error"}})
    with pytest.raises(LLMPromptRefused, match="this item fails"):
        gateway(endpoint, store=store).chat_sync(USER)
    assert len(endpoint.requests) == 1
    assert [r["status"] for r in call_rows(store, "r1")] == ["error"]
