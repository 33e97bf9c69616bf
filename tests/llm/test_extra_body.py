"""Spec: `llm.extra_body` adds fields to every chat completion request's body, for what an endpoint needs
beyond the OpenAI parameters (an outside check, DashScope's Qwen3 open models: every run stopped at once
on "HTTP 400: parameter.enable_thinking must be set to false for non-streaming calls", and no setting
could send it). Scripted local endpoint, real gateway and `openai` client."""

from __future__ import annotations

import json

import pytest

from envscaler_core.config import ConfigError, load_settings
from envscaler_core.prompts.mine import JUDGE_STATEFUL, StatefulJudgement, TaskInput
from tests.llm.helpers import scripted_gateway as gateway
from tests.llm.scripted_endpoint import completion

NO_THINKING = {"enable_thinking": False, "chat_template_kwargs": {"enable_thinking": False}}
ANSWER = {"analysis": "It changes an order.", "stateful": True}


def test_a_chat_request_carries_the_extra_body_fields(endpoint) -> None:
    endpoint.script(completion("Hello."))
    gateway(endpoint, extra_body=NO_THINKING).chat_sync([{"role": "user", "content": "Hi"}])
    sent = endpoint.requests[-1]
    assert {k: sent[k] for k in NO_THINKING} == NO_THINKING and sent["messages"][-1]["content"] == "Hi"


def test_a_structured_request_carries_them_too(endpoint) -> None:
    endpoint.script(completion(json.dumps(ANSWER)))
    out = gateway(endpoint, extra_body=NO_THINKING).structured_sync(JUDGE_STATEFUL, TaskInput(task="Cancel order 4."))
    assert out == StatefulJudgement(**ANSWER)
    assert endpoint.requests[-1]["enable_thinking"] is False
    assert endpoint.requests[-1]["response_format"] == {"type": "json_object"}


def test_an_embeddings_request_does_not(endpoint) -> None:
    endpoint.script({"object": "list", "data": [{"object": "embedding", "index": 0, "embedding": [0.1, 0.2]}],
                     "model": "m", "usage": {"prompt_tokens": 2, "total_tokens": 2}})
    gateway(endpoint, extra_body=NO_THINKING).embed_sync(["a clinic"])
    assert "enable_thinking" not in endpoint.requests[-1]


def test_the_environment_gives_the_body_as_a_json_object() -> None:
    settings = load_settings(environ={"ENVSCALER_LLM__EXTRA_BODY": '{"enable_thinking": false}'})
    assert settings.llm.extra_body == {"enable_thinking": False}


def test_the_environment_gives_one_field_with_its_value_read_as_json() -> None:
    """`false` is the JSON false, not the text "false" (which DashScope would refuse)."""
    settings = load_settings(environ={"ENVSCALER_LLM__EXTRA_BODY__ENABLE_THINKING": "false",
                                      "ENVSCALER_LLM__EXTRA_BODY__TOP_K": "20"})
    assert settings.llm.extra_body == {"enable_thinking": False, "top_k": 20}


@pytest.mark.parametrize(("value", "words"), [
    ('{"enable_thinking": fals}', "llm.extra_body: .*not valid JSON"),
    ('["enable_thinking"]', "llm.extra_body: .*a JSON list, not an object"),
    ('{"model": "other", "tools": []}', "llm.extra_body: .*model, tools cannot be set here"),
])
def test_a_body_that_is_no_object_or_sets_what_the_factory_writes_is_refused_naming_the_variable(value, words) -> None:
    with pytest.raises(ConfigError, match=words + ".*ENVSCALER_LLM__EXTRA_BODY="):
        load_settings(environ={"ENVSCALER_LLM__EXTRA_BODY": value})
