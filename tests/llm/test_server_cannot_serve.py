"""Spec: a reply saying the request can never succeed on this server as it runs (llama.cpp's 500 "tools param
requires --jinja flag", a chat template that raises, vLLM's auto tool choice off, a model without tools, a
LiteLLM relay's unsupported parameter) is a refusal of the request's form: not retried, and the one-line error
quotes the server and says what to change on the server side. Real gateway and `openai` client against a
scripted endpoint with each server's body. Before, llama.cpp's 500s were retried and reported as an outage
("retry later or raise llm.max_retries / llm.timeout_s"; an outside check paid 184 calls before that stop)."""

from __future__ import annotations

import pytest

from envscaler_core.llm.errors import LLMRequestRejected
from envscaler_core.llm.server_refusals import SERVER_REFUSALS
from tests.llm.helpers import call_rows, scripted_gateway as gateway
from tests.llm.scripted_endpoint import STATUS

USER = [{"role": "user", "content": "cancel order 4"}]
TOOLS = [{"type": "function", "function": {"name": "cancel", "parameters": {"type": "object", "properties": {}}}}]
REPLIES = {
    "llamacpp-nojinja-500": ({STATUS: 500, "error": {"code": 500, "message": "tools param requires --jinja flag",
                                                      "type": "server_error"}}, "--jinja"),
    "llamacpp-unsupported-tools-500": ({STATUS: 500, "error": {"code": 500, "message": "Unsupported param: tools",
                                                               "type": "server_error"}}, "upgrade llama.cpp"),
    "llamacpp-template-500": ({STATUS: 500, "error": {"code": 500, "message": "Jinja Exception: Conversation roles "
                                                       "must alternate user/assistant/user/assistant/...",
                                                       "type": "server_error"}}, "--chat-template"),
    "vllm-auto-tool-400": ({STATUS: 400, "object": "error", "message": "\"auto\" tool choice requires "
                            "--enable-auto-tool-choice and --tool-call-parser to be set", "type": "BadRequestError",
                            "param": None, "code": 400}, "--enable-auto-tool-choice"),
    "vllm-no-template-400": ({STATUS: 400, "object": "error", "message": "As of transformers v4.44, default chat "
                              "template is no longer allowed, so you must provide a chat template if the tokenizer "
                              "does not define one.", "type": "BadRequestError", "code": 400}, "--chat-template"),
    "ollama-no-tools-400": ({STATUS: 400, "error": {"message": "registry.ollama.ai/library/gemma:2b does not support "
                                                    "tools", "type": "api_error"}}, "tagged `tools`"),
    "litellm-unsupported-400": ({STATUS: 400, "error": {"message": "litellm.UnsupportedParamsError: ollama does not "
                                 "support parameters: ['tools'], for model=gemma.", "type": None}}, "LiteLLM proxy"),
}


@pytest.mark.parametrize(("reply", "advice"), REPLIES.values(), ids=REPLIES.keys())
def test_a_request_this_server_cannot_serve_is_not_retried_and_says_what_to_change(endpoint, store, reply,
                                                                                 advice) -> None:
    endpoint.script(reply)
    with pytest.raises(LLMRequestRejected) as caught:
        gateway(endpoint, store=store, max_retries=3).chat_sync(USER, tools=TOOLS)
    said = str(caught.value)
    assert len(endpoint.requests) == 1, "retried"
    assert "cannot serve chat request as the server runs now" in said and advice in said, said
    assert "retry later" not in said
    message = reply.get("message") or (reply["error"]["message"])
    assert message[:30] in said  # the server's own words
    assert [r["status"] for r in call_rows(store, "r1")] == ["error"]


def test_every_row_reads_its_own_example() -> None:
    from envscaler_core.llm.server_refusals import server_refusal
    for row in SERVER_REFUSALS:
        assert server_refusal(row.example) is not None, row.server


def test_a_loading_model_503_is_still_retried(endpoint) -> None:
    endpoint.script({STATUS: 503, "error": {"message": "Loading model", "type": "unavailable_error"}},
                    {STATUS: 200, "id": "c", "object": "chat.completion", "created": 0, "model": "m",
                     "choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}]})
    gateway(endpoint).chat_sync(USER)
    assert len(endpoint.requests) == 2
