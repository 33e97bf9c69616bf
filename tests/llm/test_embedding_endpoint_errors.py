"""Spec: an embeddings request's errors name the embedding endpoint and its settings when they are set,
not the chat endpoint's. Real gateway and `openai` client against a scripted endpoint (and a port nothing
listens on). Before, an outside check got "cannot reach LLM endpoint <the chat URL> ...; set
OPENAI_BASE_URL / llm.base_url" for an unreachable embedding_base_url, and "check OPENAI_API_KEY /
llm.api_key" for a 401 to ENVSCALER_LLM__EMBEDDING_API_KEY."""

from __future__ import annotations

import socket

import pytest

from envscaler_core.llm.errors import LLMRequestRejected, LLMUnavailableError
from tests.llm.helpers import scripted_gateway as gateway
from tests.llm.scripted_endpoint import STATUS

WRONG_KEY = {STATUS: 401, "error": {"message": "Incorrect API key provided", "type": "invalid_request_error"}}


def _closed_port_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def test_an_unreachable_embedding_endpoint_is_named_with_its_setting(endpoint) -> None:
    url = _closed_port_url()
    with pytest.raises(LLMUnavailableError) as caught:
        gateway(endpoint, embedding_base_url=url, max_retries=1).embed_sync(["a clinic"])
    said = str(caught.value)
    assert f"cannot reach LLM endpoint {url}" in said and "ENVSCALER_LLM__EMBEDDING_BASE_URL" in said
    assert endpoint.base_url not in said and "OPENAI_BASE_URL" not in said


def test_a_401_from_the_embedding_endpoint_names_the_embedding_key(endpoint) -> None:
    endpoint.script(WRONG_KEY)
    with pytest.raises(LLMRequestRejected) as caught:
        gateway(endpoint, embedding_base_url=endpoint.base_url, embedding_api_key="wrong").embed_sync(["a clinic"])
    said = str(caught.value)
    assert "check ENVSCALER_LLM__EMBEDDING_API_KEY / llm.embedding_api_key" in said and "OPENAI_API_KEY" not in said


def test_a_401_for_embeddings_on_the_chat_endpoint_names_the_chat_key(endpoint) -> None:
    endpoint.script(WRONG_KEY)
    with pytest.raises(LLMRequestRejected, match="check OPENAI_API_KEY / llm.api_key"):
        gateway(endpoint).embed_sync(["a clinic"])
