"""Spec: a third outside check's reshaping proxy (answering as real OpenAI-compatible endpoints do),
its shapes fed verbatim through the real gateway and the real `openai` client from a scripted local
endpoint. A stream is read like the same reply sent whole (one reading: `sse_body` rebuilds the message,
`replies` reads it); choices by their `index`; OpenRouter's reasoning state and relayed errors; the
statuses and headers real endpoints send; what a stopping run keeps of the answers already on their way."""

from __future__ import annotations

import json

import pytest

from envscaler_core.llm import LLMGateway
from envscaler_core.prompts.mine import JUDGE_STATEFUL, StatefulJudgement, TaskInput
from envscaler_core.store import Store
from tests.fixtures.llm import mock_llm_settings
from tests.llm.helpers import call_rows
from tests.llm.scripted_endpoint import MEDIA, RAW, completion

TASK = TaskInput(task="Cancel order 4.")
ANSWER = {"analysis": "It changes an order.", "stateful": True}
GOOD = json.dumps(ANSWER)
TOOLS = [{"type": "function", "function": {"name": "cancel_order", "parameters": {"type": "object", "properties": {
    "order_id": {"type": "string"}}}}},
         {"type": "function", "function": {"name": "list_orders", "parameters": {"type": "object", "properties": {}}}}]
USER = [{"role": "user", "content": "cancel order 4"}]
USAGE = {"prompt_tokens": 40, "completion_tokens": 9, "total_tokens": 49}


def gateway(endpoint, store=None, **overrides) -> LLMGateway:
    settings = mock_llm_settings(endpoint.base_url, **{"cache": False, "backoff_max_s": 0.05, **overrides})
    return LLMGateway(settings, store=store, run_id="r1" if store is not None else None)


@pytest.fixture
def store(tmp_path):
    with Store.from_url(f"duckdb:///{tmp_path / 'reshaped.duckdb'}") as s:
        yield s


def chunk(delta: dict | None = None, finish: str | None = None, index: int = 0) -> dict:
    return {"id": "chatcmpl-s", "object": "chat.completion.chunk", "created": 0, "model": "m",
            "choices": [{"index": index, "delta": delta or {}, "finish_reason": finish}]}


def stream_text(chunks: list[dict], nl: str = "\n", ensure_ascii: bool = True) -> str:
    return "".join(f"data: {json.dumps(c, ensure_ascii=ensure_ascii)}{nl}{nl}" for c in chunks) + f"data: [DONE]{nl}{nl}"


def sse(chunks: list[dict], **kw) -> dict:
    return {RAW: stream_text(chunks, **kw), MEDIA: "text/event-stream"}


def calls_of(message: dict) -> list[tuple[str, dict]]:
    return [(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in message.get("tool_calls") or []]


# ---- 1: a stream's lines end at CR, LF or CRLF only (the SSE spec), never inside a JSON string -------

ODD_BREAKS = ["\u2028", "\u2029", "\x85", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e"]


@pytest.mark.parametrize("odd", ODD_BREAKS, ids=[f"U+{ord(c):04X}" for c in ODD_BREAKS])
@pytest.mark.parametrize("nl", ["\n", "\r\n", "\r"], ids=["LF", "CRLF", "CR"])
def test_a_stream_with_a_line_separator_inside_a_string_is_read_like_the_same_json_body(endpoint, store, odd, nl) -> None:
    """str.splitlines() also breaks at U+2028, U+2029, U+0085 and \\x0b-\\x1e: a reasoning text holding one,
    sent raw, cut its chunk in two ("not JSON"), the item was lost and its billed tokens not counted."""
    reasoning = f"step one{odd}step two"
    pieces = [GOOD[i:i + 9] for i in range(0, len(GOOD), 9)]
    endpoint.script(sse([chunk({"role": "assistant", "content": "", "reasoning_content": reasoning})]
                        + [chunk({"content": p}) for p in pieces]
                        + [chunk(finish="stop"), {"choices": [], "usage": USAGE}], nl=nl, ensure_ascii=False))
    assert gateway(endpoint, store).structured_sync(JUDGE_STATEFUL, TASK) == StatefulJudgement(**ANSWER)
    [row] = call_rows(store, "r1")
    assert (row["status"], row["attempts"], row["prompt_tokens"], row["completion_tokens"]) == ("ok", 1, 40, 9)


def test_data_lines_without_their_space_and_comments_are_read(endpoint) -> None:
    text = (": OPENROUTER PROCESSING\n\n" + stream_text([chunk({"role": "assistant", "content": "Order 4"}),
                                                       chunk({"content": " is cancelled."}), chunk(finish="stop")])
            .replace("data: ", "data:"))
    endpoint.script({RAW: text, MEDIA: "text/event-stream"})
    assert gateway(endpoint).chat_sync(USER).message["content"] == "Order 4 is cancelled."


def test_a_stream_unreadable_for_another_reason_still_counts_the_usage_it_reported(endpoint, store) -> None:
    """The provider billed the stream: its `usage` counts even when a chunk cannot be read."""
    bad = {RAW: 'data: {"choices": [{"index": 0, "delta": {"content": "Hi\n\n'
                + f"data: {json.dumps({'choices': [], 'usage': USAGE})}\n\ndata: [DONE]\n\n", MEDIA: "text/event-stream"}
    endpoint.script(bad, completion("Order 4 is cancelled."))
    assert gateway(endpoint, store).chat_sync(USER).message["content"] == "Order 4 is cancelled."
    [row] = call_rows(store, "r1")
    assert (row["attempts"], row["prompt_tokens"], row["completion_tokens"]) == (2, 40 + 11, 9 + 7)


# ---- check 4, finding 3: a stream's usage split over its chunks is merged -----------------------------

def tokens_of(store) -> tuple:
    from sqlalchemy import text

    with store.engine.connect() as conn:
        return tuple(conn.execute(text("SELECT status, prompt_tokens, completion_tokens, estimated_tokens, "
                                       "cached_tokens FROM llm_calls WHERE run_id = 'r1'")).one())


PROMPT_SIDE = {"prompt_tokens": 400, "completion_tokens": 0, "total_tokens": 400,
               "prompt_tokens_details": {"cached_tokens": 256}}


def test_a_usage_split_over_a_streams_chunks_is_merged_not_replaced(endpoint, store) -> None:
    """Anthropic's shape (message_start carries the prompt, message_delta only the output): the last
    chunk's usage replaced the first, the prompt was estimated (282,299 recorded of 478,791 billed) and the
    prefix-cache discount lost."""
    first = {**chunk({"role": "assistant", "content": "Order 4 "}), "usage": PROMPT_SIDE}
    endpoint.script(sse([first, chunk({"content": "is cancelled."}), chunk(finish="stop"),
                         {"choices": [], "usage": {"completion_tokens": 9}}]))
    reply = gateway(endpoint, store).chat_sync(USER)
    assert reply.message["content"] == "Order 4 is cancelled." and not reply.usage_estimated
    assert tokens_of(store) == ("ok", 400, 9, 0, 256)


def test_a_running_usage_repeated_on_every_chunk_is_not_summed(endpoint, store) -> None:
    pieces = ["Order ", "4 is ", "cancelled."]
    chunks = [{**chunk({"content": p}), "usage": {"prompt_tokens": 400, "completion_tokens": 3 * k,
                                                   "total_tokens": 400 + 3 * k}} for k, p in enumerate(pieces, 1)]
    endpoint.script(sse(chunks + [chunk(finish="stop")]))
    assert gateway(endpoint, store).chat_sync(USER).message["content"] == "Order 4 is cancelled."
    assert tokens_of(store) == ("ok", 400, 9, 0, 0)


# ---- check 4, finding 4: an error chunk keeps the usage reported before it ----------------------------

CREDITS = {"code": 402, "message": "Insufficient credits. Add more using https://openrouter.ai/settings/credits"}


def test_an_error_chunk_keeps_the_usage_reported_before_it(endpoint, store) -> None:
    """OpenRouter relays an upstream failure mid-stream as a chunk carrying `error`: the error rows had
    0/0 tokens although their streams had reported 279/47, 603/426 and 599/450 before it (billed)."""
    from envscaler_core.llm import LLMRequestRejected

    head = [{**chunk({"role": "assistant", "content": "Order 4"}),
             "usage": {"prompt_tokens": 279, "completion_tokens": 47, "total_tokens": 326}}]
    endpoint.script(sse(head + [{"error": CREDITS, "choices": []}]))
    with pytest.raises(LLMRequestRejected, match="quota or credit"):
        gateway(endpoint, store).chat_sync(USER)
    assert tokens_of(store) == ("error", 279, 47, 0, 0)


# ---- 10: a byte-order mark before an event stream ---------------------------------------------------

def test_a_byte_order_mark_before_an_event_stream_is_ignored(endpoint) -> None:
    text = stream_text([chunk({"role": "assistant", "content": "Hi"}), chunk(finish="stop")])
    endpoint.script({RAW: "\ufeff" + text, MEDIA: "text/event-stream"})
    reply = gateway(endpoint, max_retries=0).chat_sync(USER)
    assert reply.message["content"] == "Hi" and len(endpoint.requests) == 1


# ---- 2: streamed tool calls without an `index` ------------------------------------------------------

def test_streamed_complete_calls_without_an_index_are_separate_calls(endpoint) -> None:
    """Gemini's OpenAI layer streams each call whole, without `index`: they were merged into one call
    with both argument objects glued together."""
    endpoint.script(sse([
        chunk({"role": "assistant", "tool_calls": [{"id": "call_a", "type": "function", "function": {
            "name": "cancel_order", "arguments": '{"order_id":"4"}'}}]}),
        chunk({"tool_calls": [{"id": "call_b", "type": "function", "function": {
            "name": "cancel_order", "arguments": '{"order_id":"5"}'}}]}),
        chunk({"tool_calls": [{"id": "", "type": "function", "function": {"name": "list_orders", "arguments": "{}"}}]}),
        chunk(finish="tool_calls")]))
    message = gateway(endpoint).chat_sync(USER, tools=TOOLS).message
    assert calls_of(message) == [("cancel_order", {"order_id": "4"}), ("cancel_order", {"order_id": "5"}),
                                 ("list_orders", {})]
    assert [c["id"] for c in message["tool_calls"]][:2] == ["call_a", "call_b"]


def test_streamed_argument_pieces_without_an_index_continue_their_call(endpoint) -> None:
    args = '{"order_id": "4"}'
    endpoint.script(sse([
        chunk({"role": "assistant", "tool_calls": [{"id": "call_a", "type": "function",
                                                    "function": {"name": "cancel_order", "arguments": ""}}]}),
        *[chunk({"tool_calls": [{"function": {"arguments": args[i:i + 4]}}]}) for i in range(0, len(args), 4)],
        chunk({"tool_calls": [{"id": "call_b", "type": "function", "function": {"name": "list_orders", "arguments": ""}}]}),
        chunk({"tool_calls": [{"function": {"arguments": "{}"}}]}),
        chunk(finish="tool_calls")]))
    assert calls_of(gateway(endpoint).chat_sync(USER, tools=TOOLS).message) == [
        ("cancel_order", {"order_id": "4"}), ("list_orders", {})]


def test_a_server_repeating_id_and_name_on_every_piece_streams_one_call(endpoint) -> None:
    args = '{"order_id": "4"}'
    piece = {"index": 0, "id": "call_a", "type": "function"}
    endpoint.script(sse([chunk({"role": "assistant", "tool_calls": [{**piece, "function": {"name": "cancel_order", "arguments": ""}}]}),
                         *[chunk({"tool_calls": [{**piece, "function": {"name": "cancel_order", "arguments": args[i:i + 4]}}]})
                           for i in range(0, len(args), 4)],
                         chunk(finish="tool_calls")]))
    assert calls_of(gateway(endpoint).chat_sync(USER, tools=TOOLS).message) == [("cancel_order", {"order_id": "4"})]


# ---- 3: every form the non-streamed reader accepts, streamed --------------------------------------

def test_content_streamed_as_lists_of_parts_is_the_text(endpoint) -> None:
    """Mistral streams `content` as a list of parts per chunk: the reply was read as ''."""
    endpoint.script(sse([chunk({"role": "assistant", "content": [{"type": "text", "text": "Order 4 "}]}),
                         chunk({"content": [{"type": "text", "text": "is cancelled."}]}), chunk(finish="stop")]))
    assert gateway(endpoint).chat_sync(USER).message["content"] == "Order 4 is cancelled."


def test_streamed_thinking_parts_are_the_reasoning_in_one_piece(endpoint) -> None:
    think = "I should cancel it, then say so."
    endpoint.script(sse([chunk({"role": "assistant", "content": [
        {"type": "thinking", "thinking": [{"type": "text", "text": think[i:i + 5]}]}]}) for i in range(0, len(think), 5)]
        + [chunk({"content": [{"type": "text", "text": "Done."}]}), chunk(finish="stop")]))
    message = gateway(endpoint).chat_sync(USER).message
    assert (message["content"], message["reasoning_content"]) == ("Done.", think)


def test_a_legacy_function_call_streamed_in_pieces_is_the_call(endpoint) -> None:
    endpoint.script(sse([chunk({"role": "assistant", "function_call": {"name": "cancel_order", "arguments": ""}}),
                         chunk({"function_call": {"arguments": '{"order_id":'}}),
                         chunk({"function_call": {"arguments": '"4"}'}}), chunk(finish="function_call")]))
    assert calls_of(gateway(endpoint).chat_sync(USER, tools=TOOLS).message) == [("cancel_order", {"order_id": "4"})]


def test_streamed_reasoning_details_are_the_reasoning_and_kept_whole(endpoint) -> None:
    endpoint.script(sse([
        chunk({"role": "assistant", "content": "", "reasoning_details": [
            {"type": "reasoning.text", "text": "think ", "format": "unknown", "index": 0}]}),
        chunk({"reasoning_details": [{"type": "reasoning.text", "text": "it over", "index": 0}]}),
        chunk({"reasoning_details": [{"type": "reasoning.encrypted", "data": "CiQB", "index": 1}]}),
        chunk({"content": "answer"}), chunk(finish="stop")]))
    message = gateway(endpoint).chat_sync(USER).message
    assert (message["content"], message["reasoning_content"]) == ("answer", "think it over")
    assert message["reasoning_details"] == [
        {"type": "reasoning.text", "text": "think it over", "format": "unknown", "index": 0},
        {"type": "reasoning.encrypted", "data": "CiQB", "index": 1}]


def test_every_string_field_of_a_streamed_reasoning_detail_is_joined_by_its_index(endpoint) -> None:
    """A fourth outside check split an encrypted detail's `data` (and an Anthropic detail's `signature`)
    over two fragments with one index: only the first half was kept, sent back truncated, and the
    endpoint refused the turn ("Function call is missing a thought_signature"), stopping the run."""
    data, signature = "gAAAA" + "0f" * 32 + "\u2028==", "EqQBCkYIBhgCKkD" + "ab" * 20
    whole = [{"type": "reasoning.text", "text": "I should cancel it.", "signature": signature,
              "format": "anthropic-claude-v1", "index": 0},
             {"type": "reasoning.encrypted", "data": data, "id": "rs_1", "format": "google-gemini-v1", "index": 1},
             {"type": "reasoning.summary", "summary": "Cancel it.", "format": "unknown", "index": 2}]
    endpoint.script(sse([
        chunk({"role": "assistant", "content": "", "reasoning_details": [
            {"type": "reasoning.text", "text": "I should ", "signature": None, "format": "anthropic-claude-v1",
             "index": 0}]}),
        chunk({"reasoning_details": [{"type": "reasoning.text", "text": "cancel it.", "format": "anthropic-claude-v1",
                                      "index": 0}]}),
        chunk({"reasoning_details": [{"type": "reasoning.text", "signature": signature[:20], "index": 0}]}),
        chunk({"reasoning_details": [{"type": "reasoning.text", "signature": signature[20:], "index": 0}]}),
        chunk({"reasoning_details": [{"type": "reasoning.encrypted", "data": data[:30], "id": "rs_1",
                                      "format": "google-gemini-v1", "index": 1}]}),
        chunk({"reasoning_details": [{"type": "reasoning.encrypted", "data": data[30:], "index": 1}]}),
        chunk({"reasoning_details": [whole[2]]}),  # sent whole: kept as sent
        chunk({"tool_calls": [{"index": 0, "id": "c1", "type": "function",
                               "function": {"name": "list_orders", "arguments": "{}"}}]}),
        chunk(finish="tool_calls")], ensure_ascii=False), completion("No orders."))
    gw = gateway(endpoint)
    message = gw.chat_sync(USER, tools=TOOLS).message
    assert message["reasoning_details"] == whole
    gw.chat_sync([*USER, message, {"role": "tool", "tool_call_id": "c1", "content": "[]"}], tools=TOOLS)
    assert endpoint.requests[1]["messages"][1]["reasoning_details"] == whole


def test_a_streamed_calls_extra_content_is_kept_with_it(endpoint) -> None:
    signature = {"google": {"thought_signature": "CqQB"}}
    endpoint.script(sse([chunk({"role": "assistant", "tool_calls": [{
        "index": 0, "id": "c1", "type": "function", "extra_content": signature,
        "function": {"name": "list_orders", "arguments": "{}"}}]}), chunk(finish="tool_calls")]))
    [call] = gateway(endpoint).chat_sync(USER, tools=TOOLS).message["tool_calls"]
    assert call["extra_content"] == signature


def test_a_streamed_legacy_text_choice_is_the_content(endpoint) -> None:
    pieces = [{"choices": [{"index": 0, "text": t, "finish_reason": None}]} for t in ("Order 4 ", "is cancelled.")]
    endpoint.script(sse(pieces + [{"choices": [{"index": 0, "text": "", "finish_reason": "stop"}]}]))
    assert gateway(endpoint).chat_sync(USER).message["content"] == "Order 4 is cancelled."


# ---- 4: OpenRouter's reasoning state goes back with its turn ------------------------------------------

def test_openrouter_reasoning_details_go_back_with_the_turn_and_stay_out_of_exports(endpoint) -> None:
    """Gemini through OpenRouter refuses a tool-call turn sent back without its `reasoning_details` (the
    encrypted thought signature): HTTP 400 "Provider returned error", and the run stopped at the first
    rollout."""
    from envscaler_core.export.sft import clean_messages

    details = [{"type": "reasoning.text", "text": "I should cancel it", "format": "google-gemini-v1", "index": 0},
               {"type": "reasoning.encrypted", "data": "CiQB0e2Kb", "id": "tool_1", "format": "google-gemini-v1",
                "index": 1}]
    endpoint.script(completion(None, finish="tool_calls", reasoning="I should cancel it", reasoning_details=details,
                               tool_calls=[{"id": "tool_1", "type": "function", "function": {
                                   "name": "cancel_order", "arguments": '{"order_id": "4"}'}}]),
                    completion("Order 4 is cancelled."))
    gw = gateway(endpoint)
    first = gw.chat_sync(USER, tools=TOOLS)
    assert first.message["reasoning_content"] == "I should cancel it"
    history = [*USER, first.message, {"role": "tool", "tool_call_id": "tool_1", "content": "ok"}]
    gw.chat_sync(history, tools=TOOLS)
    sent = endpoint.requests[1]["messages"][1]
    assert sent["reasoning_details"] == details and "reasoning_content" not in sent
    assert "reasoning_details" not in clean_messages(history)[1]


# ---- 8: choices are read by their index -------------------------------------------------------------

def test_choices_are_read_by_their_index_not_their_place_in_the_list(endpoint) -> None:
    body = completion("FIRST")
    body["choices"] = [{"index": 1, "message": {"role": "assistant", "content": "SECO"}, "finish_reason": "length"},
                       {"index": 0, "message": {"role": "assistant", "content": "FIRST"}, "finish_reason": "stop"}]
    endpoint.script(body)
    assert gateway(endpoint).chat_sync(USER).message["content"] == "FIRST"
    assert len(endpoint.requests) == 1  # index 1's cut-off is not the answer's: not asked again


# ---- 9: a call id the endpoint left out is unique in the trajectory -----------------------------------

def test_call_ids_the_endpoint_left_out_are_numbered_by_turn(endpoint) -> None:
    def legacy() -> dict:
        return completion(None, finish="function_call", function_call={"name": "list_orders", "arguments": "{}"})

    endpoint.script(legacy(), legacy())
    gw = gateway(endpoint)
    history = list(USER)
    for _ in range(2):
        message = gw.chat_sync(history, tools=TOOLS).message
        history += [message, {"role": "tool", "tool_call_id": message["tool_calls"][0]["id"], "content": "[]"}]
    assert [m["tool_calls"][0]["id"] for m in history if m["role"] == "assistant"] == ["call_1_0", "call_2_0"]


def test_call_ids_the_endpoint_repeats_across_turns_are_unique_in_the_trajectory(endpoint) -> None:
    """A fourth outside check's endpoint named every call `call_0`: every call and tool_call_id of a
    trajectory was `call_0` (the suffix applied only within one reply), so a tool result could not be
    told apart from another's in the SFT rows."""
    def numbered_from_zero(n: int) -> dict:
        return completion(None, finish="tool_calls", tool_calls=[
            {"id": "call_0", "type": "function",
             "function": {"name": "cancel_order", "arguments": f'{{"order_id":"{k}"}}'}}
            for k in range(n)])

    endpoint.script(numbered_from_zero(1), numbered_from_zero(2), numbered_from_zero(1))
    gw = gateway(endpoint)
    history = list(USER)
    for _ in range(3):
        message = gw.chat_sync(history, tools=TOOLS).message
        history += [message, *[{"role": "tool", "tool_call_id": c["id"], "content": "ok"}
                               for c in message["tool_calls"]]]
    ids = [c["id"] for m in history if m["role"] == "assistant" for c in m["tool_calls"]]
    assert len(ids) == 4 and len(set(ids)) == 4 and ids[0] == "call_0"
    assert [m["tool_call_id"] for m in history if m["role"] == "tool"] == ids
    assert [c["id"] for c in endpoint.requests[2]["messages"][3]["tool_calls"]] == ids[1:3]


# ---- 6: statuses about the moment are retried ---------------------------------------------------------

@pytest.mark.parametrize("status", [425, 499])
def test_too_early_and_client_closed_are_retried(endpoint, status) -> None:
    endpoint.script({"__http_status__": status, "error": {"message": f"upstream said {status}", "code": status}},
                    completion("Order 4 is cancelled."))
    assert gateway(endpoint).chat_sync(USER).message["content"] == "Order 4 is cancelled."
    assert len(endpoint.requests) == 2


# ---- 5: the provider's words a relay wrapped -----------------------------------------------------------

ANTHROPIC_TOO_LONG = json.dumps({"type": "error", "error": {"type": "invalid_request_error",
                                                          "message": "prompt is too long: 215000 tokens > 200000 maximum"}})


def openrouter_error(status: int, raw: str, provider: str = "Anthropic") -> dict:
    return {"__http_status__": status, "error": {"message": "Provider returned error", "code": status,
                                                 "metadata": {"raw": raw, "provider_name": provider}}}


def test_a_prompt_too_long_relayed_by_openrouter_is_this_prompts_refusal_quoting_the_provider(endpoint) -> None:
    """It was "HTTP 400: Provider returned error", a rejected request, and the whole run stopped."""
    from envscaler_core.llm.errors import LLMPromptRefused

    endpoint.script(openrouter_error(400, ANTHROPIC_TOO_LONG))
    with pytest.raises(LLMPromptRefused, match=r"Provider returned error \(Anthropic: prompt is too long: 215000"):
        gateway(endpoint).chat_sync(USER)
    assert len(endpoint.requests) == 1


def test_a_relayed_error_in_a_200_body_quotes_the_provider(endpoint) -> None:
    from envscaler_core.llm.errors import LLMUnavailableError

    endpoint.script({"error": {"message": "Provider returned error", "code": 502,
                               "metadata": {"raw": "upstream overloaded", "provider_name": "Google AI Studio"}}})
    with pytest.raises(LLMUnavailableError, match=r"Provider returned error \(Google AI Studio: upstream overloaded\)"):
        gateway(endpoint, max_retries=1).chat_sync(USER)


def test_a_relayed_gemini_refusal_is_quoted(endpoint) -> None:
    from envscaler_core.llm.errors import LLMRequestRejected

    raw = json.dumps({"error": {"code": 400, "message": "Function call is missing a thought_signature in "
                                "functionCall parts.", "status": "INVALID_ARGUMENT"}}, indent=2)
    endpoint.script(openrouter_error(400, raw, "Google AI Studio"))
    with pytest.raises(LLMRequestRejected, match="Google AI Studio: Function call is missing a thought_signature"):
        gateway(endpoint).chat_sync(USER)


# ---- 11: a 429 without Retry-After waits until the exhausted limit resets -------------------------

def test_openai_rate_limit_durations_are_read() -> None:
    from envscaler_core.llm.retry import parse_duration

    assert [parse_duration(v) for v in ("2s", "1m30s", "150ms", "6m0s", "1h2m3.5s", "0.5", "soon", "", "-1s")] == [
        2.0, 90.0, 0.15, 360.0, 3723.5, 0.5, None, None, None]


@pytest.mark.parametrize(("headers", "waited"), [
    ({"x-ratelimit-reset-requests": "600ms", "x-ratelimit-reset-tokens": "1m30s", "x-ratelimit-remaining-requests": "0"},
     0.6),  # the exhausted limit's reset
    ({"x-ratelimit-reset-requests": "2s", "x-ratelimit-reset-tokens": "1m30s"}, 1.0),  # the longer, capped
], ids=["requests-exhausted", "capped"])
def test_a_429_without_retry_after_waits_for_the_rate_limit_reset(endpoint, headers, waited) -> None:
    """It was retried after plain backoff (0.13 s), into the same limit."""
    import time

    endpoint.script({"__http_status__": 429, "__headers__": headers,
                     "error": {"message": "Rate limit reached for requests", "code": "rate_limit_exceeded"}},
                    completion("Order 4 is cancelled."))
    started = time.monotonic()
    gateway(endpoint, backoff_base_s=0.01, backoff_max_s=1.0).chat_sync(USER)
    assert waited <= time.monotonic() - started < waited + 0.8


# ---- 7: answers already on their way when the run stops are recorded ------------------------------

def test_an_answer_arriving_while_the_run_stops_is_recorded_and_not_paid_again(endpoint, store) -> None:
    """The run stops (a run-stopping error cancels the work in flight): an answer that arrives within the
    grace is recorded like any answer, so the resume is served it from the cache. Before, the store held
    a third of what the proxy delivered, and the resume paid for the rest again."""
    import asyncio

    from tests.llm.scripted_endpoint import TRICKLE

    endpoint.script({TRICKLE: (0.3, 2), **completion("Order 4 is cancelled.")})
    settings = mock_llm_settings(endpoint.base_url, backoff_max_s=0.05)

    async def stopped_run() -> None:
        gw = LLMGateway(settings, store=store, run_id="r1")
        call = asyncio.ensure_future(gw.chat(USER))
        await asyncio.sleep(0.2)  # the request is in flight, its answer on the way
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        await gw.aclose()

    asyncio.run(stopped_run())
    [row] = call_rows(store, "r1")
    assert (row["status"], row["prompt_tokens"], row["completion_tokens"]) == ("ok", 11, 7)
    resumed = LLMGateway(settings, store=store, run_id="r1").chat_sync(USER)
    assert resumed.cached and resumed.message["content"] == "Order 4 is cancelled." and len(endpoint.requests) == 1


def test_an_answer_later_than_the_grace_is_cut_and_the_stop_stays_bounded(endpoint, store) -> None:
    import asyncio
    import time

    from envscaler_core.llm import gateway as gateway_module
    from tests.llm.scripted_endpoint import TRICKLE

    endpoint.script({TRICKLE: (0.5, 4), **completion("late")})
    settings = mock_llm_settings(endpoint.base_url, timeout_s=1.0)

    async def stopped_run() -> float:
        gw = LLMGateway(settings, store=store, run_id="r1")
        call = asyncio.ensure_future(gw.chat(USER))
        await asyncio.sleep(0.2)
        call.cancel()
        started = time.monotonic()
        with pytest.raises(asyncio.CancelledError):
            await call
        await gw.aclose()
        return time.monotonic() - started

    assert gateway_module.STOP_GRACE_S > 1.0  # here the attempt's deadline (timeout_s) is the bound
    assert asyncio.run(stopped_run()) < 1.2
    assert call_rows(store, "r1") == []  # nothing arrived: nothing paid, nothing recorded


# ---- check 4, finding 1: calls no one awaits any more still get the stop grace ------------------------

@pytest.mark.parametrize("how", ["gather-sibling", "task-taken-off-its-list"])
def test_an_answer_whose_caller_stopped_waiting_is_recorded_before_the_gateway_closes(endpoint, store, how) -> None:
    """A fourth outside check: a quota error out of `asyncio.gather` (no `return_exceptions`) left the
    sibling method calls running with no one waiting; a judge task taken off the list the stop waits for
    was cancelled but not awaited. The run closed the gateway at once, the client went with it, and
    answers arriving +1.6 to +3.6 s after the stop were lost and paid for again on resume."""
    import asyncio

    from envscaler_core.llm import LLMRequestRejected
    from tests.llm.scripted_endpoint import STATUS, TRICKLE

    endpoint.script({TRICKLE: (0.3, 3), **completion("Order 4 is cancelled.")},
                    {STATUS: 402, "error": {"code": 402, "message": "Insufficient credits."}})
    settings = mock_llm_settings(endpoint.base_url, cache=False, backoff_max_s=0.05)

    async def stopped_run() -> list[dict]:
        gw = LLMGateway(settings, store=store, run_id="r1")
        slow = asyncio.ensure_future(gw.chat(USER))
        await asyncio.sleep(0.15)  # its request is in flight, its answer on the way
        if how == "gather-sibling":
            with pytest.raises(LLMRequestRejected):
                await asyncio.gather(slow, gw.chat([{"role": "user", "content": "list my orders"}]))
        else:
            slow.cancel()  # cancelled with the rest of the work, but no one awaits it any more
            await asyncio.sleep(0)
        await gw.aclose()
        return call_rows(store, "r1")  # what the run's store holds when the run ends

    rows = asyncio.run(stopped_run())
    assert [(r["status"], r["prompt_tokens"], r["completion_tokens"]) for r in rows if r["status"] == "ok"] \
        == [("ok", 11, 7)]
