"""Spec: the output-room parameter a cut-off reply is asked again with is the one the endpoint accepts:
`max_completion_tokens` first on OpenAI's and Azure's hosts, `max_tokens` elsewhere, and switched (for the
rest of the gateway's life) when a 400 names the one sent as unsupported. A roomier retry refused for any
other reason keeps the cut-off reply, with the server's words in the reason (an outside check, Azure
o-series: every cut-off reply failed its item, "cut off ... after 14 tokens", nothing about max_tokens).
Scripted local endpoint, real gateway and `openai` client."""

from __future__ import annotations

import json

import pytest

from envscaler_core.llm import LLMOutputInvalid
from envscaler_core.llm.exchange import room_parameter
from envscaler_core.prompts.mine import JUDGE_STATEFUL, StatefulJudgement, TaskInput
from tests.llm.helpers import call_rows, scripted_gateway as gateway
from tests.llm.scripted_endpoint import STATUS, completion

TASK = TaskInput(task="Cancel order 4.")
ANSWER = {"analysis": "It changes an order.", "stateful": True}
GOOD = json.dumps(ANSWER)




@pytest.mark.parametrize("url", ["https://api.openai.com/v1", "https://my-res.openai.azure.com/openai/v1",
                                 "https://my-res.cognitiveservices.azure.com/openai/v1"])
def test_openai_and_azure_hosts_are_first_asked_with_max_completion_tokens(url) -> None:
    assert room_parameter(url) == "max_completion_tokens"


def test_other_hosts_are_first_asked_with_max_tokens() -> None:
    assert room_parameter("http://127.0.0.1:8000/v1") == room_parameter("https://openrouter.ai/api/v1") == "max_tokens"


UNSUPPORTED_MAX_TOKENS = {STATUS: 400, "error": {
    "message": "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' "
               "instead.", "type": "invalid_request_error", "param": "max_tokens", "code": "unsupported_parameter"}}


def test_a_400_naming_max_tokens_unsupported_switches_the_parameter_for_the_rest_of_the_run(endpoint, store) -> None:
    """Before: the 400 was read as "the room did not fit", the cut-off reply kept: every cut-off reply failed
    its item ("cut off by the output limit after 14 tokens") and nothing mentioned max_tokens."""
    endpoint.script(completion(GOOD[:20], finish="length"), UNSUPPORTED_MAX_TOKENS, completion(GOOD))
    gw = gateway(endpoint, store)
    assert gw.structured_sync(JUDGE_STATEFUL, TASK) == StatefulJudgement(**ANSWER)
    assert [(r.get("max_tokens"), r.get("max_completion_tokens")) for r in endpoint.requests] == [
        (None, None), (1024, None), (None, 1024)]
    assert call_rows(store, "r1")[0]["status"] == "ok"
    endpoint.script(completion(GOOD[:20], finish="length"), completion(GOOD))  # remembered: asked right at once
    assert gw.structured_sync(JUDGE_STATEFUL, TaskInput(task="Cancel order 5.")).stateful is True
    assert [(r.get("max_tokens"), r.get("max_completion_tokens")) for r in endpoint.requests] == [
        (None, None), (None, 1024)]


def test_a_server_that_knows_only_max_tokens_gets_it_back(endpoint) -> None:
    unknown = {STATUS: 400, "object": "error", "message": "Unrecognized request argument supplied: max_completion_tokens",
               "type": "BadRequestError", "code": 400}
    gw = gateway(endpoint)
    gw._room_parameter = "max_completion_tokens"  # as for an openai.com / azure.com host
    endpoint.script(completion(GOOD[:20], finish="length"), unknown, completion(GOOD))
    assert gw.structured_sync(JUDGE_STATEFUL, TASK).stateful is True
    assert [(r.get("max_tokens"), r.get("max_completion_tokens")) for r in endpoint.requests] == [
        (None, None), (None, 1024), (1024, None)]


def test_a_roomier_retry_refused_for_another_reason_keeps_the_cut_off_reply_quoting_the_server(endpoint, store) -> None:
    refused = {STATUS: 400, "error": {"message": "Invalid 'tools[0].function.name': string does not match pattern",
                                      "type": "invalid_request_error"}}
    endpoint.script(completion(GOOD[:20], finish="length"), refused)
    with pytest.raises(LLMOutputInvalid) as err:
        gateway(endpoint, store, repair_attempts=0).structured_sync(JUDGE_STATEFUL, TASK)
    assert "cut off by the output limit" in err.value.reason
    assert "asking again with room for 1024 tokens (max_tokens) was refused" in err.value.reason
    assert "string does not match pattern" in err.value.reason
    assert "string does not match pattern" in call_rows(store, "r1")[0]["error"]
