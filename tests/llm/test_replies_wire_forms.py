"""Spec: what an outside check's reshaping proxy sent in front of the mock (`/tmp/rt_llm/proxy.py`),
fed verbatim through the real gateway and the real `openai` client from a scripted local endpoint.

Bodies that are no usable completion (`choices: []`, an HTML page, an empty or cut body, a stream that
stops early) are transient bad answers: retried like a 5xx, and only after `max_retries` the call's
usual one-line `LLMUnavailableError`. Other shapes of a good answer are read as that answer: stream
chunks in a non-streaming body, the first non-empty choice, `delta`/`text` instead of `message`,
Anthropic usage names and counts sent as strings."""

from __future__ import annotations

import json

import pytest

from envscaler_core.llm import LLMGateway, LLMUnavailableError
from envscaler_core.prompts.mine import JUDGE_STATEFUL, StatefulJudgement, TaskInput
from envscaler_core.store import Store
from tests.fixtures.llm import mock_llm_settings
from tests.llm.helpers import call_rows
from tests.llm.scripted_endpoint import MEDIA, RAW, completion

TASK = TaskInput(task="Cancel order 4.")
ANSWER = {"analysis": "It changes an order.", "stateful": True}
GOOD = json.dumps(ANSWER)
TOOLS = [{"type": "function", "function": {"name": "cancel_order", "parameters": {"type": "object", "properties": {
    "order_id": {"type": "string"}}}}}]
USER = [{"role": "user", "content": "cancel order 4"}]


def gateway(endpoint, store=None, **overrides) -> LLMGateway:
    settings = mock_llm_settings(endpoint.base_url, cache=False, backoff_max_s=0.05, **overrides)
    return LLMGateway(settings, store=store, run_id="r1" if store is not None else None)


@pytest.fixture
def store(tmp_path):
    with Store.from_url(f"duckdb:///{tmp_path / 'wire.duckdb'}") as s:
        yield s


# ---- 1-2: a 200 that is no completion is retried like a 5xx ----------------------------------------

NO_CHOICES = {"id": "x", "object": "chat.completion", "created": 0, "model": "m", "choices": [],
              "usage": {"prompt_tokens": 5, "completion_tokens": 0, "total_tokens": 5}}
CLOUDFLARE = {RAW: "<!DOCTYPE html><html><head><title>Just a moment...</title></head><body>Checking your browser "
                   "before accessing the site.</body></html>", MEDIA: "text/html; charset=utf-8"}
EMPTY_BODY = {RAW: ""}
CUT_BODY = {RAW: '{"id":"chatcmpl-x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant",'
                 '"content":"{\\"'}
STREAM_CUT = {RAW: 'data: {"id":"x","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant"},'
                   '"finish_reason":null}]}\n\n', MEDIA: "text/event-stream"}
BAD_ANSWERS = {"choices-empty": NO_CHOICES, "cloudflare-html": CLOUDFLARE, "empty-body": EMPTY_BODY,
               "truncated-body": CUT_BODY, "stream-cut-early": STREAM_CUT}


@pytest.mark.parametrize("bad", BAD_ANSWERS.values(), ids=BAD_ANSWERS.keys())
def test_a_200_that_is_no_completion_is_retried_like_a_5xx(endpoint, store, bad) -> None:
    endpoint.script(bad, completion(GOOD))
    assert gateway(endpoint, store).structured_sync(JUDGE_STATEFUL, TASK) == StatefulJudgement(**ANSWER)
    [row] = call_rows(store, "r1")
    assert (row["status"], row["attempts"], row["repairs"]) == ("ok", 2, 0)


@pytest.mark.parametrize("bad", BAD_ANSWERS.values(), ids=BAD_ANSWERS.keys())
def test_a_chat_turn_answered_with_no_completion_first_is_asked_again(endpoint, bad) -> None:
    endpoint.script(bad, completion("Order 4 is cancelled."))
    assert gateway(endpoint).chat_sync(USER, stage="agent", tools=TOOLS).message["content"] == "Order 4 is cancelled."
    assert len(endpoint.requests) == 2


@pytest.mark.parametrize("bad", [NO_CHOICES, CLOUDFLARE], ids=["choices-empty", "cloudflare-html"])
def test_bad_answers_until_the_retries_run_out_fail_that_call_like_exhausted_5xx_retries(endpoint, store, bad) -> None:
    endpoint.script(bad)
    with pytest.raises(LLMUnavailableError, match=r"kept failing .* after 3 attempt\(s\) \(last: HTTP 200 with"):
        gateway(endpoint, store, max_retries=2).structured_sync(JUDGE_STATEFUL, TASK)
    assert len(endpoint.requests) == 3
    [row] = call_rows(store, "r1")
    assert (row["status"], row["attempts"]) == ("error", 3)


# ---- 3: stream chunks in the body of a non-streaming call -------------------------------------------

def sse(chunks: list[dict], done: bool = True) -> dict:
    base = {"id": "chatcmpl-s", "object": "chat.completion.chunk", "created": 0, "model": "m"}
    text = "".join("data: " + json.dumps({**base, **c}) + "\n\n" for c in chunks)
    return {RAW: text + ("data: [DONE]\n\n" if done else ""), MEDIA: "text/event-stream"}


def chunk(delta: dict | None = None, finish: str | None = None) -> dict:
    return {"choices": [{"index": 0, "delta": delta or {}, "finish_reason": finish}]}


USAGE = {"prompt_tokens": 40, "completion_tokens": 9, "total_tokens": 49}


def test_stream_chunks_in_a_non_streaming_body_are_one_structured_answer(endpoint, store) -> None:
    pieces = [GOOD[i:i + 7] for i in range(0, len(GOOD), 7)]
    endpoint.script(sse([chunk({"role": "assistant", "content": ""})] + [chunk({"content": p}) for p in pieces]
                        + [chunk(finish="stop"), {"choices": [], "usage": USAGE}]))
    assert gateway(endpoint, store).structured_sync(JUDGE_STATEFUL, TASK) == StatefulJudgement(**ANSWER)
    [row] = call_rows(store, "r1")
    assert (row["attempts"], row["prompt_tokens"], row["completion_tokens"]) == (1, 40, 9)


def test_stream_chunks_with_tool_call_deltas_are_merged_by_index(endpoint) -> None:
    args = '{"order_id": "4"}'
    endpoint.script(sse([
        chunk({"role": "assistant", "content": ""}),
        chunk({"tool_calls": [{"index": 0, "id": "c1", "type": "function",
                               "function": {"name": "cancel_order", "arguments": ""}}]}),
        chunk({"tool_calls": [{"index": 1, "id": "c2", "type": "function",
                               "function": {"name": "cancel_order", "arguments": ""}}]}),
        *[chunk({"tool_calls": [{"index": 0, "function": {"arguments": args[i:i + 5]}}]}) for i in range(0, len(args), 5)],
        chunk({"tool_calls": [{"index": 1, "function": {"arguments": '{"order_id": "5"}'}}]}),
        chunk(finish="tool_calls"), {"choices": [], "usage": USAGE},
    ]))
    reply = gateway(endpoint).chat_sync(USER, stage="agent", tools=TOOLS)
    calls = [(c["id"], c["function"]["name"], json.loads(c["function"]["arguments"])) for c in reply.message["tool_calls"]]
    assert calls == [("c1", "cancel_order", {"order_id": "4"}), ("c2", "cancel_order", {"order_id": "5"})]
    assert reply.usage == {"prompt_tokens": 40, "completion_tokens": 9} and len(endpoint.requests) == 1


def test_a_stream_with_a_chunk_that_is_not_json_is_asked_again(endpoint) -> None:
    endpoint.script({RAW: 'data: {"choices": [{"index": 0, "delta": {"content": "Hi"\n\ndata: [DONE]\n\n',
                     MEDIA: "text/event-stream"}, completion("Order 4 is cancelled."))
    assert gateway(endpoint).chat_sync(USER, stage="agent").message["content"] == "Order 4 is cancelled."
    assert len(endpoint.requests) == 2


# ---- 9: the answer in another choice, or under `delta` / `text` -------------------------------------

def test_the_first_non_empty_choice_is_the_answer(endpoint) -> None:
    body = completion(GOOD)
    body["choices"] = [{"index": 0, "message": {"role": "assistant", "content": ""}, "finish_reason": "stop"},
                       {**body["choices"][0], "index": 1}]
    endpoint.script(body)
    assert gateway(endpoint).structured_sync(JUDGE_STATEFUL, TASK) == StatefulJudgement(**ANSWER)
    assert len(endpoint.requests) == 1


def test_a_chat_turn_in_a_later_choice_with_tool_calls_is_the_turn(endpoint) -> None:
    body = completion(None, finish="tool_calls", tool_calls=[{"id": "c1", "type": "function", "function": {
        "name": "cancel_order", "arguments": '{"order_id": "4"}'}}])
    body["choices"] = [{"index": 0, "message": {"role": "assistant", "content": None}, "finish_reason": "stop"},
                       {**body["choices"][0], "index": 1}]
    endpoint.script(body)
    msg = gateway(endpoint).chat_sync(USER, stage="agent", tools=TOOLS).message
    assert msg["tool_calls"][0]["function"]["name"] == "cancel_order"


def test_a_legacy_text_choice_is_the_message_content(endpoint) -> None:
    endpoint.script({"id": "x", "object": "text_completion", "created": 0, "model": "m",
                     "choices": [{"index": 0, "text": GOOD, "finish_reason": "stop"}]})
    assert gateway(endpoint).structured_sync(JUDGE_STATEFUL, TASK) == StatefulJudgement(**ANSWER)


def test_a_choice_with_delta_instead_of_message_is_the_message(endpoint) -> None:
    body = completion(None, finish="tool_calls", tool_calls=[{"id": "c1", "type": "function", "function": {
        "name": "cancel_order", "arguments": '{"order_id": "4"}'}}])
    body["choices"][0]["delta"] = body["choices"][0].pop("message")
    endpoint.script(body)
    msg = gateway(endpoint).chat_sync(USER, stage="agent", tools=TOOLS).message
    assert msg["tool_calls"][0]["function"]["arguments"] == '{"order_id": "4"}'


# ---- 12: token counts in Anthropic's names, or as strings -------------------------------------------

def test_anthropic_usage_names_count_cached_and_created_cache_tokens_as_prompt(endpoint, store) -> None:
    endpoint.script(completion(GOOD, usage={"input_tokens": 24, "output_tokens": 7, "cache_read_input_tokens": 100,
                                            "cache_creation_input_tokens": 6}))
    gateway(endpoint, store).structured_sync(JUDGE_STATEFUL, TASK)
    [row] = call_rows(store, "r1")
    assert (row["prompt_tokens"], row["completion_tokens"]) == (130, 7)
    usage = store.llm_usage("r1")["mine"]
    assert (usage["estimated_tokens"], usage["cached_tokens"]) == (0, 100)


def test_the_responses_apis_input_tokens_already_hold_the_cached_ones(endpoint, store) -> None:
    endpoint.script(completion(GOOD, usage={"input_tokens": 130, "output_tokens": 7,
                                            "input_tokens_details": {"cached_tokens": 100}}))
    gateway(endpoint, store).structured_sync(JUDGE_STATEFUL, TASK)
    [row] = call_rows(store, "r1")
    assert (row["prompt_tokens"], row["completion_tokens"]) == (130, 7)


def test_token_counts_sent_as_numeric_strings_are_read_not_estimated(endpoint, store) -> None:
    endpoint.script(completion(GOOD, usage={"prompt_tokens": "30", "completion_tokens": "5", "total_tokens": "35",
                                            "prompt_tokens_details": {"cached_tokens": "8"}}))
    reply_gw = gateway(endpoint, store)
    reply_gw.structured_sync(JUDGE_STATEFUL, TASK)
    [row] = call_rows(store, "r1")
    assert (row["prompt_tokens"], row["completion_tokens"]) == (30, 5)
    assert reply_gw.usage_by_stage()["mine"]["estimated_tokens"] == 0
    assert reply_gw.usage_by_stage()["mine"]["cached_tokens"] == 8
