"""Spec: any refusal that says the server serves no embeddings (vLLM serving a chat model: 400; llama.cpp
without --embeddings: 501; TGI's 405; a 404) gets the embedding-settings advice, and is never retried.
Real gateway and `openai` client against a scripted endpoint answering with each server's own body. Before,
only a 404 got the advice: vLLM's 400 said "the request itself is wrong", llama.cpp's 501 was retried until
"retry later or raise llm.max_retries" (an outside check)."""

from __future__ import annotations

import pytest

from envscaler_core.llm.errors import LLMRequestRejected
from tests.llm.helpers import scripted_gateway as gateway
from tests.llm.scripted_endpoint import RAW, STATUS

REFUSALS = {
    "vllm-chat-model-400": {STATUS: 400, "object": "error", "message": "The model does not support Embeddings API",
                            "type": "BadRequestError", "param": None, "code": 400},
    "llamacpp-501": {STATUS: 501, "error": {"code": 501, "message": "This server does not support embeddings. Start "
                                                                    "it with --embeddings", "type": "not_supported_error"}},
    "ollama-500": {STATUS: 500, "error": "this model does not support embeddings"},
    "tgi-405": {STATUS: 405, RAW: ""},
    "plain-404": {STATUS: 404, "error": {"message": "Not Found"}},
}


@pytest.mark.parametrize("reply", REFUSALS.values(), ids=REFUSALS.keys())
def test_a_server_without_embeddings_gets_the_embedding_settings_advice_once(endpoint, reply) -> None:
    endpoint.script(reply)
    with pytest.raises(LLMRequestRejected) as caught:
        gateway(endpoint, max_retries=3).embed_sync(["a clinic"])
    said = str(caught.value)
    assert "has no embeddings" in said and "ENVSCALER_LLM__EMBEDDING_BASE_URL" in said, said
    assert f"HTTP {reply[STATUS]}" in said
    assert len(endpoint.requests) == 1  # never retried


def test_another_400_on_embeddings_is_not_blamed_on_missing_embeddings(endpoint) -> None:
    endpoint.script({STATUS: 400, "error": {"message": "input must not be empty", "type": "invalid_request_error"}})
    with pytest.raises(LLMRequestRejected) as caught:
        gateway(endpoint).embed_sync(["a clinic"])
    assert "has no embeddings" not in str(caught.value)
