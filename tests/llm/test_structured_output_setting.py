"""Spec: `llm.structured_output` picks how structured requests ask for JSON, and a server that refuses
`response_format` (TGI's 422, LM Studio's 400) is asked again without it, remembered for the rest of the run
and said once in the log; the item is not failed for it. Real gateway and `openai` client against a scripted
endpoint answering with each server's body. Before, every structured request sent `json_object` and such a
server stopped the run at its first request ("the request itself is wrong"; an outside check)."""

from __future__ import annotations

import json
import logging

import pytest

from envscaler_core.config import LLMSettings
from envscaler_core.prompts.mine import JUDGE_STATEFUL, StatefulJudgement, TaskInput
from tests.llm.helpers import call_rows, scripted_gateway as gateway
from tests.llm.scripted_endpoint import STATUS, completion

TASK = TaskInput(task="Cancel order 4.")
ANSWER = {"analysis": "It changes an order.", "stateful": True}
REFUSALS = {
    "tgi-422": {STATUS: 422, "error": "Failed to deserialize the JSON body into the target type: response_format: "
                "unknown variant `json_object`, expected one of `json`, `regex`, `json_schema` at line 1 column 20",
                "error_type": "validation"},
    "tgi-422-missing-value": {STATUS: 422, "error": "Failed to deserialize the JSON body into the target type: "
                              "response_format: missing field `value` at line 1 column 120"},
    "lmstudio-400": {STATUS: 400, "error": "'response_format.type' must be 'json_schema' or 'text'"},
    "llamacpp-400": {STATUS: 400, "error": {"code": 400, "message": "Failed to parse grammar",
                                            "type": "invalid_request_error"}},
    # llama.cpp raises a runtime error for a response_format type it does not know: sent as HTTP 500
    "llamacpp-500": {STATUS: 500, "error": {"code": 500, "message": "response_format type must be one of \"text\" or "
                                            "\"json_object\", but got: json_schema", "type": "server_error"}},
}


@pytest.mark.parametrize("refusal", REFUSALS.values(), ids=REFUSALS.keys())
def test_a_refused_response_format_is_asked_again_without_it_and_the_item_succeeds(endpoint, store, refusal) -> None:
    endpoint.script(refusal, completion(json.dumps(ANSWER)))
    out = gateway(endpoint, store=store).structured_sync(JUDGE_STATEFUL, TASK)
    assert out == StatefulJudgement(**ANSWER)
    assert "response_format" in endpoint.requests[0] and "response_format" not in endpoint.requests[1]
    assert [r["status"] for r in call_rows(store, "r1")] == ["ok"]


def test_the_gateway_remembers_it_for_the_rest_of_the_run_and_says_so_once(endpoint, caplog) -> None:
    endpoint.script(REFUSALS["tgi-422"], completion(json.dumps(ANSWER)))
    llm = gateway(endpoint)
    with caplog.at_level(logging.WARNING):
        llm.structured_sync(JUDGE_STATEFUL, TASK)
        llm.structured_sync(JUDGE_STATEFUL, TaskInput(task="Book a table."))
    assert len(endpoint.requests) == 3 and "response_format" not in endpoint.requests[2]
    said = [r.getMessage() for r in caplog.records if "refused response_format" in r.getMessage()]
    assert len(said) == 1 and "structured_output" in said[0]


def test_none_sends_no_response_format(endpoint) -> None:
    endpoint.script(completion(json.dumps(ANSWER)))
    gateway(endpoint, structured_output="none").structured_sync(JUDGE_STATEFUL, TASK)
    assert "response_format" not in endpoint.requests[0]


def test_json_schema_sends_the_reply_contracts_schema(endpoint) -> None:
    endpoint.script(completion(json.dumps(ANSWER)))
    gateway(endpoint, structured_output="json_schema").structured_sync(JUDGE_STATEFUL, TASK)
    sent = endpoint.requests[0]["response_format"]
    assert sent["type"] == "json_schema"
    assert sent["json_schema"]["schema"] == StatefulJudgement.model_json_schema() and sent["json_schema"]["name"]


def test_json_object_stays_the_default(endpoint) -> None:
    endpoint.script(completion(json.dumps(ANSWER)))
    gateway(endpoint).structured_sync(JUDGE_STATEFUL, TASK)
    assert endpoint.requests[0]["response_format"] == {"type": "json_object"}


def test_the_form_is_no_part_of_the_cache_key(endpoint, store) -> None:
    endpoint.script(completion(json.dumps(ANSWER)))
    gateway(endpoint, store=store, cache=True).structured_sync(JUDGE_STATEFUL, TASK)
    again = gateway(endpoint, store=store, cache=True, structured_output="none").structured_sync(JUDGE_STATEFUL, TASK)
    assert again == StatefulJudgement(**ANSWER) and len(endpoint.requests) == 1


def test_an_unknown_form_is_refused_naming_the_setting() -> None:
    with pytest.raises(ValueError, match="structured_output"):
        LLMSettings(structured_output="json")
