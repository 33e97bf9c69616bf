"""Spec: what an outside check's reshaping proxy sent in front of the mock (`/tmp/rt_llm/proxy.py`),
fed verbatim through the real gateway and the real `openai` client from a scripted local endpoint.

Bodies that are no usable completion (`choices: []`, an HTML page, an empty or cut body, a stream that
stops early) are transient bad answers: retried like a 5xx; after `max_retries` the item fails
(`LLMNoAnswer`, an unusable answer), since the endpoint is up and it is this payload it will not answer. Other shapes of a good answer are read as that answer: stream
chunks in a non-streaming body, the first non-empty choice, `delta`/`text` instead of `message`,
Anthropic usage names and counts sent as strings."""

from __future__ import annotations

import json

import pytest

from envscaler_core.llm import LLMGateway
from envscaler_core.llm.errors import LLMOutputInvalid
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
def test_bad_answers_until_the_retries_run_out_fail_that_item_not_the_run(endpoint, store, bad) -> None:
    """The endpoint is up and answers this payload with nothing usable every time (a WAF rule, a provider
    blocking one prompt): an unusable answer for this item, which the stage records and gives up after
    its attempts, not an outage that stops the run on every resume (an outside check's run never finished)."""
    endpoint.script(bad)
    with pytest.raises(LLMOutputInvalid, match=r"answered .* 3 time\(s\) without a usable completion \(last: HTTP 200"):
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


@pytest.mark.parametrize("usage", [
    {"prompt_tokens": 3_000_000_000, "completion_tokens": 5},  # over the store's 32-bit columns
    {"prompt_tokens": 10 ** 20, "completion_tokens": 5},
    {"prompt_tokens": -100, "completion_tokens": 5},
    {"prompt_tokens": 30, "completion_tokens": -3},
], ids=["3e9", "1e20", "negative-prompt", "negative-completion"])
def test_an_impossible_token_count_is_estimated_and_the_call_is_recorded(endpoint, store, usage) -> None:
    """A broken proxy's count must neither go negative in the totals nor make the audit row uncommittable
    (an outside check's 3e9 left every later run on that store stopping on the same journal rows)."""
    endpoint.script(completion(GOOD, usage=usage))
    reply_gw = gateway(endpoint, store)
    reply_gw.structured_sync(JUDGE_STATEFUL, TASK)
    [row] = call_rows(store, "r1")
    assert row["status"] == "ok" and 0 <= row["prompt_tokens"] < 10 ** 6 and 0 <= row["completion_tokens"] < 10 ** 6
    assert reply_gw.usage_by_stage()["mine"]["estimated_tokens"] > 0


# ---- 4-8: tool calls in other shapes --------------------------------------------------------------

def read_calls_of(endpoint, body: dict) -> list[tuple[str, str, dict]]:
    endpoint.script(body)
    msg = gateway(endpoint).chat_sync(USER, stage="agent", tools=TOOLS).message
    assert len(endpoint.requests) == 1
    return [(c["id"], c["function"]["name"], json.loads(c["function"]["arguments"])) for c in msg.get("tool_calls") or []]


CALL = {"id": "call_7", "type": "function", "function": {"name": "cancel_order", "arguments": '{"order_id": "4"}'}}
CALLS_AS_CONTENT = {
    "openai-list": json.dumps([CALL]),
    "tool_calls-object": json.dumps({"tool_calls": [{"name": "cancel_order", "arguments": {"order_id": "4"}}]}),
    "one-openai-call": json.dumps({"type": "function", "function": {"name": "cancel_order", "arguments": {"order_id": "4"}}}),
}


@pytest.mark.parametrize("content", CALLS_AS_CONTENT.values(), ids=CALLS_AS_CONTENT.keys())
def test_tool_calls_written_as_json_in_content_are_the_turns_calls(endpoint, content) -> None:
    calls = read_calls_of(endpoint, completion(content, finish="tool_calls"))
    assert [(name, args) for _, name, args in calls] == [("cancel_order", {"order_id": "4"})]


def test_an_openai_shaped_call_in_content_keeps_its_id() -> None:
    from envscaler_core.llm.replies import normalise_assistant
    msg = normalise_assistant({"role": "assistant", "content": json.dumps([CALL])}, TOOLS)
    assert msg["tool_calls"][0]["id"] == "call_7" and msg["content"] is None


def test_json_calls_in_content_naming_a_tool_not_offered_stay_text(endpoint) -> None:
    content = json.dumps([{**CALL, "function": {"name": "drop_table", "arguments": "{}"}}])
    endpoint.script(completion(content, finish="tool_calls"))
    msg = gateway(endpoint).chat_sync(USER, stage="agent", tools=TOOLS).message
    assert "tool_calls" not in msg and msg["content"] == content


def test_anthropic_tool_use_blocks_are_tool_calls_and_text_blocks_the_content(endpoint) -> None:
    endpoint.script(completion([{"type": "text", "text": "Cancelling it."},
                                {"type": "tool_use", "id": "toolu_01", "name": "cancel_order", "input": {"order_id": "4"}}],
                               finish="tool_use"))
    msg = gateway(endpoint).chat_sync(USER, stage="agent", tools=TOOLS).message
    assert msg["content"] == "Cancelling it."
    assert [(c["id"], c["function"]["name"], c["function"]["arguments"]) for c in msg["tool_calls"]] == [
        ("toolu_01", "cancel_order", '{"order_id": "4"}')]


@pytest.mark.parametrize("name", ["functions.cancel_order", "cancel_order<|channel|>commentary",
                                  "functions.cancel_order<|channel|>commentary", "cancel_order<|constrain|>json"])
def test_harmony_decorated_tool_names_are_the_offered_tool(endpoint, name) -> None:
    calls = read_calls_of(endpoint, completion(None, finish="tool_calls", tool_calls=[
        {**CALL, "function": {**CALL["function"], "name": name}}]))
    assert calls == [("call_7", "cancel_order", {"order_id": "4"})]


def test_a_decorated_name_is_kept_when_the_tool_offered_has_that_name() -> None:
    from envscaler_core.llm.replies import normalise_assistant
    tools = [{"type": "function", "function": {"name": "functions.cancel_order", "parameters": {}}}, *TOOLS]
    msg = normalise_assistant({"role": "assistant", "content": None, "tool_calls": [
        {**CALL, "function": {**CALL["function"], "name": "functions.cancel_order"}}]}, tools)
    assert msg["tool_calls"][0]["function"]["name"] == "functions.cancel_order"


@pytest.mark.parametrize("arguments", [
    '```json\n{"order_id": "4"}\n```', '```\n{"order_id": "4"}\n```',
    'Here are the arguments: {"order_id": "4"}', '{"order_id": "4"}\nThat cancels it.',
], ids=["json-fence", "bare-fence", "prose-before", "prose-after"])
def test_arguments_wrapped_in_a_fence_or_prose_are_the_object_inside(endpoint, arguments) -> None:
    calls = read_calls_of(endpoint, completion(None, finish="tool_calls", tool_calls=[
        {**CALL, "function": {**CALL["function"], "arguments": arguments}}]))
    assert calls == [("call_7", "cancel_order", {"order_id": "4"})]


def test_arguments_with_two_objects_in_prose_stay_as_written() -> None:
    from envscaler_core.llm.replies import ReplyProblem, parse_arguments
    with pytest.raises(ReplyProblem, match="not valid JSON"):
        parse_arguments('either {"order_id": "4"} or {"order_id": "5"}')


def test_one_call_split_over_two_entries_with_the_same_index_is_one_call(endpoint) -> None:
    args = '{"order_id": "4"}'
    calls = read_calls_of(endpoint, completion(None, finish="tool_calls", tool_calls=[
        {"index": 0, "id": "call_7", "type": "function", "function": {"name": "cancel_order", "arguments": args[:8]}},
        {"index": 0, "function": {"arguments": args[8:]}},
        {"index": 1, "id": "call_8", "type": "function", "function": {"name": "cancel_order", "arguments": args[:5]}},
        {"index": 1, "function": {"arguments": args[5:].replace("4", "5")}},
    ]))
    assert calls == [("call_7", "cancel_order", {"order_id": "4"}), ("call_8", "cancel_order", {"order_id": "5"})]


def test_complete_calls_that_share_an_index_stay_separate_calls() -> None:
    from envscaler_core.llm.replies import normalise_assistant
    msg = normalise_assistant({"role": "assistant", "content": None, "tool_calls": [
        {"index": 0, "id": "a", "type": "function", "function": {"name": "cancel_order", "arguments": '{"order_id": "4"}'}},
        {"index": 0, "id": "b", "type": "function", "function": {"name": "cancel_order", "arguments": '{"order_id": "5"}'}},
    ]}, TOOLS)
    assert [c["id"] for c in msg["tool_calls"]] == ["a", "b"]


# ---- 11: zero-width characters --------------------------------------------------------------------

def test_zero_width_characters_around_a_chat_turns_text_are_removed(endpoint) -> None:
    endpoint.script(completion("\ufeff\u200bOrder 4 is can\u200dcelled.\u200b\u2060"))
    msg = gateway(endpoint).chat_sync(USER, stage="agent", tools=TOOLS).message
    assert msg["content"] == "Order 4 is can\u200dcelled."  # inside the text: left as written


@pytest.mark.parametrize("blank", ["\u200b", "\u00a0\u00a0", "\u2060", "\ufeff"], ids=["zwsp", "nbsp", "wj", "bom"])
def test_odd_spaces_used_as_json_whitespace_are_read_as_whitespace(endpoint, blank) -> None:
    endpoint.script(completion(json.dumps(ANSWER, indent=2).replace("\n  ", "\n" + blank)))
    assert gateway(endpoint).structured_sync(JUDGE_STATEFUL, TASK) == StatefulJudgement(**ANSWER)
    assert len(endpoint.requests) == 1


def test_odd_spaces_inside_json_strings_are_kept() -> None:
    from envscaler_core.llm.replies.json_text import load_value
    assert load_value('{\u00a0"a": "x\u00a0y\u200bz"}') == {"a": "x\u00a0y\u200bz"}
