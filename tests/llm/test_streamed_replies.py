"""Spec: streamed replies as real endpoints and relays send them (a third and a fourth outside check's
reshaping proxies), fed verbatim through the real gateway and the real `openai` client from a scripted
local endpoint: a stream is read like the same reply sent whole (one reading: `sse_body` rebuilds the
message, `replies` reads it), its lines end where the SSE spec says, its usage is merged across chunks."""

from __future__ import annotations

import json

import pytest

from envscaler_core.prompts.mine import JUDGE_STATEFUL, StatefulJudgement, TaskInput
from tests.llm.helpers import call_rows, scripted_gateway as gateway
from tests.llm.scripted_endpoint import MEDIA, RAW, completion

TASK = TaskInput(task="Cancel order 4.")
ANSWER = {"analysis": "It changes an order.", "stateful": True}
GOOD = json.dumps(ANSWER)
TOOLS = [{"type": "function", "function": {"name": "cancel_order", "parameters": {"type": "object", "properties": {
    "order_id": {"type": "string"}}}}},
         {"type": "function", "function": {"name": "list_orders", "parameters": {"type": "object", "properties": {}}}}]
USER = [{"role": "user", "content": "cancel order 4"}]
USAGE = {"prompt_tokens": 40, "completion_tokens": 9, "total_tokens": 49}


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


def test_an_error_chunk_that_still_carries_a_choice_is_that_error(endpoint, store) -> None:
    """OpenRouter's documented mid-stream error: the chunk has a top-level `error` and a choice whose
    `finish_reason` is "error"; the error object was lost and the reply retried as a generic failure."""
    from envscaler_core.llm import LLMRequestRejected

    head = [{**chunk({"role": "assistant", "content": "Order 4"}),
             "usage": {"prompt_tokens": 279, "completion_tokens": 47, "total_tokens": 326}}]
    endpoint.script(sse(head + [{**chunk({"content": ""}, finish="error"), "error": CREDITS}]))
    with pytest.raises(LLMRequestRejected, match="quota or credit"):
        gateway(endpoint, store).chat_sync(USER)
    assert tokens_of(store) == ("error", 279, 47, 0, 0) and len(endpoint.requests) == 1


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
