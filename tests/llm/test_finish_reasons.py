"""Spec: every provider's finish reason is read for what it is, through the real gateway and `openai`
client against a scripted endpoint. A filter, guardrail or refusal fails the item without asking again; a
generation the server did not finish is asked again as it was; a cut-off is asked again with more room;
only a finished reply is the answer, and an unknown word is never read as one. Before, an outside check
found Bedrock's `guardrail_intervened`, watsonx's `not_finished`, Cohere's `TIMEOUT`, Gemini's `LANGUAGE`,
Anthropic's `refusal` and others kept as answers (10 of 10 SFT rows exported from such replies)."""

from __future__ import annotations

import pytest

from envscaler_core.llm.errors import LLMOutputInvalid
from tests.llm.helpers import scripted_gateway as gateway
from tests.llm.scripted_endpoint import completion

USER = [{"role": "user", "content": "book it"}]
HALF = "The appointment is booked for Mon"

FILTERED = ["guardrail_intervened", "content_filtered", "LANGUAGE", "refusal", "ERROR_TOXIC", "content_filter", "SAFETY"]
UNFINISHED = ["not_finished", "time_limit", "TIMEOUT", "TOO_MANY_TOOL_CALLS", "pause_turn", "incomplete", "abort",
              "a_word_no_provider_documents"]
FINISHED = ["stop", "end_turn", "COMPLETE", "STOP", "eos_token", "stop_sequence", None]


@pytest.mark.parametrize("reason", FILTERED)
def test_a_filtered_or_refused_reply_fails_the_item_without_asking_again(endpoint, reason) -> None:
    endpoint.script(completion(HALF, finish=reason))
    with pytest.raises(LLMOutputInvalid, match=f"guardrail or refusal stopped the reply.*'{reason}'"):
        gateway(endpoint).chat_sync(USER)
    assert len(endpoint.requests) == 1


@pytest.mark.parametrize("reason", UNFINISHED)
def test_an_unfinished_reply_is_asked_again_as_it_was(endpoint, reason) -> None:
    endpoint.script(completion(HALF, finish=reason), completion("Booked for Monday 10:00.", finish="stop"))
    reply = gateway(endpoint).chat_sync(USER)
    assert reply.message["content"] == "Booked for Monday 10:00."
    assert len(endpoint.requests) == 2 and endpoint.requests[1] == endpoint.requests[0]


@pytest.mark.parametrize("reason", UNFINISHED[:3])
def test_a_reply_never_finished_fails_the_item_quoting_the_servers_word(endpoint, reason) -> None:
    endpoint.script(completion(HALF, finish=reason))
    with pytest.raises(LLMOutputInvalid, match=f"stopped generating.*'{reason}'"):
        gateway(endpoint).chat_sync(USER)


@pytest.mark.parametrize("reason", FINISHED)
def test_a_finished_reply_is_the_answer(endpoint, reason) -> None:
    endpoint.script(completion(HALF, finish=reason))
    assert gateway(endpoint).chat_sync(USER).message["content"] == HALF
    assert len(endpoint.requests) == 1


@pytest.mark.parametrize("reason", ["MAX_TOKENS", "model_length", "length"])
def test_a_cut_off_reply_quotes_the_servers_word(endpoint, reason) -> None:
    """Before, the reason always said "(finish_reason 'length')"."""
    endpoint.script(completion(HALF, finish=reason))
    with pytest.raises(LLMOutputInvalid, match=f"cut off by the output limit .*\\(finish_reason '{reason}'\\)"):
        gateway(endpoint).chat_sync(USER)
