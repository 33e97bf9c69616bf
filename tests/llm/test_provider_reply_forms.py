"""Spec: the forms of a fifth outside check (`/tmp/rt5-replies`, a proxy answering as one provider at a time),
fed verbatim through the real gateway and the real `openai` client from a scripted local endpoint: every
wording a thinking endpoint uses to ask for its reasoning back; the content filters and context limits of
DeepSeek, DashScope, Moonshot and Zhipu as refusals of one prompt; every provider's cut-off finish reason;
a prompt count that leaves out its cached part; a retry delay stated in the error body."""

from __future__ import annotations

import json
import time

import pytest

from envscaler_core.llm import LLMRequestRejected
from envscaler_core.llm.errors import LLMPromptRefused
from tests.llm.helpers import call_rows, scripted_gateway as gateway
from tests.llm.scripted_endpoint import STATUS, completion

TOOLS = [{"type": "function", "function": {"name": "cancel_order", "parameters": {"type": "object", "properties": {
    "order_id": {"type": "string"}}}}}]
USER = [{"role": "user", "content": "cancel order 4"}]
CALL = {"id": "call_1", "type": "function", "function": {"name": "cancel_order", "arguments": '{"order_id": "4"}'}}


def _refusal(message: str) -> dict:
    return {STATUS: 400, "error": {"message": message, "type": "invalid_request_error", "param": None,
                                   "code": "invalid_request_error"}}


# ---- 1: the reasoning asked back, in every wording -------------------------------------------------------

ASKED_BACK = {
    "deepseek-v4": "The `reasoning_content` in the thinking mode must be passed back to the API.",
    "deepseek-v3.2": "Missing `reasoning_content` field in the assistant message at message index 1.",
    "kimi-k2": "thinking is enabled but reasoning_content is missing in assistant tool call message at index 1",
    "required": "reasoning_content is required for assistant messages with tool_calls when thinking is enabled",
    "expected": "Expected field `reasoning_content` in assistant message 1",
    "not-provided": "reasoning_content was not provided for the assistant message at index 1",
}


@pytest.mark.parametrize("wording", ASKED_BACK.values(), ids=ASKED_BACK.keys())
def test_a_400_asking_for_the_reasoning_back_is_answered_by_sending_it(endpoint, wording) -> None:
    """Before, DeepSeek V4's wording (no "missing", no "required") stopped every run at the second turn of
    its first rollout: "the request itself is wrong; it was not retried"."""
    endpoint.script(completion(None, finish="tool_calls", reasoning_content="Cancel it.", tool_calls=[CALL]),
                    _refusal(wording), completion("Order 4 is cancelled."))
    gw = gateway(endpoint)
    first = gw.chat_sync(USER, tools=TOOLS)
    history = [*USER, first.message, {"role": "tool", "tool_call_id": "call_1", "content": "ok"}]
    assert gw.chat_sync(history, tools=TOOLS).message["content"] == "Order 4 is cancelled."
    assert endpoint.requests[2]["messages"][1]["reasoning_content"] == "Cancel it."


def test_a_400_refusing_the_reasoning_field_is_not_read_as_asking_for_it(endpoint) -> None:
    """The field named in a refusal of it ("not permitted") is the request's form, not a missing turn."""
    endpoint.script(completion(None, finish="tool_calls", reasoning_content="Cancel it.", tool_calls=[CALL]),
                    _refusal("Extra inputs are not permitted: messages.1.reasoning_content"))
    gw = gateway(endpoint)
    first = gw.chat_sync(USER, tools=TOOLS)
    with pytest.raises(LLMRequestRejected, match="not permitted"):
        gw.chat_sync([*USER, first.message, {"role": "tool", "tool_call_id": "call_1", "content": "ok"}], tools=TOOLS)
    assert len(endpoint.requests) == 2


# ---- 3: providers' content filters and context limits are refusals of one prompt ------------------------

PROVIDER_REFUSALS = {
    "deepseek-risk": _refusal("Content Exists Risk"),
    "dashscope-inspection": {STATUS: 400, "error": {"code": "data_inspection_failed", "param": None, "message":
                             "Input data may contain inappropriate content.", "type": "data_inspection_failed"},
                             "id": "chatcmpl-9f1c", "request_id": "9f1c2a"},
    "dashscope-context": {STATUS: 400, "error": {"code": "invalid_parameter_error", "param": None, "message":
                          "<400> InternalError.Algo.InvalidParameter: Range of input length should be [1, 129024]",
                          "type": "invalid_request_error"}},
    "zhipu-1301": {STATUS: 400, "error": {"code": "1301", "message": "系统检测到输入或生成内容可能包含不安全或敏感内容，"
                                          "请您避免输入易产生敏感内容的提示语，感谢您的配合。"}},
    "kimi-risk": {STATUS: 400, "error": {"message": "The request was rejected because it was considered high risk",
                                         "type": "content_filter"}},
    "kimi-context": {STATUS: 400, "error": {"message": "Invalid request: Your request exceeded model token limit: "
                                            "131072", "type": "invalid_request_error"}},
    "volcengine-sensitive": {STATUS: 400, "error": {"code": "InputTextSensitiveContentDetected", "message": "The "
                             "request failed because the input text may contain sensitive information.",
                             "type": "BadRequest"}},
}


@pytest.mark.parametrize("name", PROVIDER_REFUSALS)
def test_a_provider_filter_or_context_refusal_fails_that_item_not_the_run(endpoint, store, name) -> None:
    """Before, each stopped the whole run at the first refusal ("the request itself is wrong"), and every
    resume stopped the same way."""
    endpoint.script(PROVIDER_REFUSALS[name])
    with pytest.raises(LLMPromptRefused, match="this item fails"):
        gateway(endpoint, store=store).chat_sync(USER)
    assert len(endpoint.requests) == 1
    assert [row["status"] for row in call_rows(store, "r1")] == ["error"]


def test_a_zhipu_code_is_matched_whole_not_inside_another_number(endpoint) -> None:
    endpoint.script({STATUS: 400, "error": {"code": "113010", "message": "Invalid model parameter"}})
    with pytest.raises(LLMRequestRejected, match="the request itself is wrong"):
        gateway(endpoint).chat_sync(USER)


# ---- 4: every provider's cut-off finish reason is a cut-off reply ----------------------------------------

@pytest.mark.parametrize("reason", ["model_length", "MODEL_LENGTH", "model_context_window_exceeded", "token_limit",
                                    "max_new_tokens"])
def test_a_reply_cut_off_in_any_providers_word_is_asked_again_with_more_room(endpoint, reason) -> None:
    """Before, Mistral's `model_length` was a finished reply: half arguments (`{"member_id": "M-`) were
    executed and truncated final texts kept (0 of 10 SFT rows)."""
    cut = completion(None, finish=reason, tool_calls=[{**CALL, "function": {"name": "cancel_order",
                                                                             "arguments": '{"order_id": "'}}])
    endpoint.script(cut, completion(None, finish="tool_calls", tool_calls=[CALL]))
    reply = gateway(endpoint).chat_sync(USER, tools=TOOLS)
    assert json.loads(reply.message["tool_calls"][0]["function"]["arguments"]) == {"order_id": "4"}
    assert len(endpoint.requests) == 2 and endpoint.requests[1]["max_tokens"] >= 1024


# ---- 5: a prompt count that leaves out its cached part --------------------------------------------------

@pytest.mark.parametrize("usage", [
    {"prompt_tokens": 300, "completion_tokens": 7, "total_tokens": 307, "prompt_tokens_details": {"cached_tokens": 700}},
    {"prompt_tokens": 300, "completion_tokens": 7, "total_tokens": 307, "prompt_tokens_details": {"cached_tokens": 700},
     "cache_creation_input_tokens": 0, "cache_read_input_tokens": 700},
], ids=["cached-beside", "litellm-old"])
def test_cached_tokens_above_the_prompt_count_are_added_to_it(endpoint, store, usage) -> None:
    """Before, `min(cached, prompt)` dropped them: an outside check's run recorded 108,732 of 269,481
    prompt tokens delivered, and its budget caps under-counted."""
    endpoint.script(completion("Order 4 is cancelled.", usage=usage))
    gw = gateway(endpoint, store=store)
    reply = gw.chat_sync(USER)
    assert reply.usage == {"prompt_tokens": 1000, "completion_tokens": 7, "cached_tokens": 700}
    row = call_rows(store, "r1")[0]
    assert (row["prompt_tokens"], row["completion_tokens"]) == (1000, 7)
    assert [s["cached_tokens"] for s in store.llm_usage("r1").values()] == [700]


def test_a_billed_error_reply_counts_cached_tokens_above_its_prompt_count(endpoint, store) -> None:
    """The same reading for usage a refused reply reports (a 200 whose choice ended in "error")."""
    body = completion("{", usage={"prompt_tokens": 300, "completion_tokens": 7,
                                  "prompt_tokens_details": {"cached_tokens": 700}})
    body["choices"][0]["finish_reason"] = "error"
    body["choices"][0]["error"] = {"code": 502, "message": "Upstream error"}
    endpoint.script(body, completion("Order 4 is cancelled.", usage={"prompt_tokens": 1000, "completion_tokens": 7}))
    gateway(endpoint, store=store).chat_sync(USER)
    assert call_rows(store, "r1")[0]["prompt_tokens"] == 2000


# ---- 9: a retry delay stated in the error body -----------------------------------------------------------

GEMINI_429 = [{"error": {"code": 429, "status": "RESOURCE_EXHAUSTED", "message": "You exceeded your current quota, "
               "please check your plan and billing details. For more information on this error, head to: "
               "https://ai.google.dev/gemini-api/docs/rate-limits. Please retry in 0.9s.", "details": [
                   {"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": [{"quotaValue": "10"}]},
                   {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "0.9s"}]}}]
BODY_DELAYS = {
    "gemini-retry-info": {STATUS: 429, "__raw_body__": json.dumps(GEMINI_429)},
    "words-only": {STATUS: 429, "error": {"message": "Rate limit reached for model in organization org_01 on tokens "
                                          "per minute. Please try again in 900ms.", "code": "rate_limit_exceeded"}},
    "retry-after-field": {STATUS: 503, "error": {"message": "Overloaded", "retry_after": 0.9}},
}


@pytest.mark.parametrize("name", BODY_DELAYS)
def test_a_delay_stated_in_the_error_body_is_waited_for(endpoint, name) -> None:
    """No Retry-After header: the body says when. Before, it was retried after plain backoff (ms here; 1-2 s
    for the outside check, whose 7 attempts all fell inside Gemini's 20 s window)."""
    endpoint.script(BODY_DELAYS[name], completion("Order 4 is cancelled."))
    started = time.monotonic()
    gateway(endpoint, backoff_base_s=0.01, backoff_max_s=5.0).chat_sync(USER)
    assert 0.9 <= time.monotonic() - started < 1.7
    assert len(endpoint.requests) == 2
