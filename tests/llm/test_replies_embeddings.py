"""Spec: embeddings answers in the forms real servers send, from a scripted raw endpoint over HTTP through
the real `openai` client. Usable forms give one vector per text in input order; anything else is one
clear error naming the endpoint and what was wrong, never a silently wrong vector."""

from __future__ import annotations

import base64
import struct

import pytest

from envscaler_core.llm import LLMGateway, LLMRequestRejected, LLMUnavailableError
from tests.fixtures.llm import mock_llm_settings
from tests.llm.scripted_endpoint import STATUS

TEXTS = ["book a flight", "cancel an order"]


def gateway(endpoint, **overrides) -> LLMGateway:
    return LLMGateway(mock_llm_settings(endpoint.base_url, cache=False, max_retries=1, **overrides))


def answer(*items: dict, **extra) -> dict:
    return {"object": "list", "data": list(items), "model": "e", **extra}


def item(index: int | None, embedding) -> dict:
    out = {"object": "embedding", "embedding": embedding}
    return out if index is None else {**out, "index": index}


def b64(values: list[float]) -> str:
    return base64.b64encode(struct.pack(f"<{len(values)}f", *values)).decode()


@pytest.mark.parametrize("body", [
    answer(item(1, [0.0, 1.0]), item(0, [1.0, 0.0]), usage={"prompt_tokens": 4, "total_tokens": 4}),  # out of order
    answer(item(None, [1.0, 0.0]), item(None, [0.0, 1.0])),  # no index, no usage
    answer(item(0, b64([1.0, 0.0])), item(1, b64([0.0, 1.0]))),  # base64 although float was asked for
    answer(item(0, [1, 0]), item(1, [0, 1])),  # integers
], ids=["shuffled", "no-index", "base64", "integers"])
def test_usable_forms_give_one_vector_per_text_in_input_order(endpoint, body) -> None:
    endpoint.script(body)
    assert gateway(endpoint).embed_sync(TEXTS) == [[1.0, 0.0], [0.0, 1.0]]


@pytest.mark.parametrize(("body", "needle"), [
    (answer(item(0, [1.0, 0.0])), "1 embeddings for 2 texts"),
    (answer(item(0, None), item(1, [0.0, 1.0])), "item 0: embedding is NoneType"),
    (answer(item(0, [1.0, "x"]), item(1, [0.0, 1.0])), "item 0: embedding holds a value that is not a number"),
    (answer(item(0, [1.0, 0.0]), item(1, [0.0, 1.0, 0.5])), "different widths"),
    (answer(item(0, [1.0, 0.0]), item(0, [0.0, 1.0])), "are not 0..1"),
    (answer(item(0, "not base64!"), item(1, [0.0, 1.0])), "not base64 float32"),
    (answer(item(0, []), item(1, [])), "item 0: embedding is empty"),
    ({"object": "list", "data": None}, "'data' is NoneType"),
], ids=["too-few", "null", "string-value", "widths", "dup-index", "bad-base64", "empty", "no-data"])
def test_an_unusable_body_is_one_clear_error(endpoint, body, needle) -> None:
    endpoint.script(body)
    with pytest.raises(LLMUnavailableError, match="embeddings") as err:
        gateway(endpoint).embed_sync(TEXTS)
    assert needle in str(err.value) and endpoint.base_url.removesuffix("/v1") in str(err.value)


def test_a_200_carrying_an_error_object_is_retried_like_that_error(endpoint) -> None:
    endpoint.script({"error": {"message": "upstream overloaded", "code": 503}},
                    answer(item(0, [1.0, 0.0]), item(1, [0.0, 1.0])))
    assert gateway(endpoint).embed_sync(TEXTS) == [[1.0, 0.0], [0.0, 1.0]]
    assert len(endpoint.requests) == 2


def test_a_200_in_vllms_error_shape_with_a_client_code_is_rejected_quoting_it(endpoint) -> None:
    endpoint.script({"object": "error", "message": "The model `e` does not exist.", "type": "NotFoundError", "code": 404})
    with pytest.raises(LLMRequestRejected, match="does not exist"):
        gateway(endpoint).embed_sync(TEXTS)
    assert len(endpoint.requests) == 1


def test_an_http_error_status_is_rejected_with_the_servers_words(endpoint) -> None:
    endpoint.script({STATUS: 400, "error": {"message": "input is too long for this model"}})
    with pytest.raises(LLMRequestRejected, match="input is too long"):
        gateway(endpoint).embed_sync(TEXTS)
