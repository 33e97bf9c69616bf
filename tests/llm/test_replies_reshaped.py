"""Spec: a third and a fourth outside check's reshaping proxies (answering as real OpenAI-compatible
endpoints do), their shapes fed verbatim through the real gateway and the real `openai` client from a
scripted local endpoint: choices by their `index`; call ids; OpenRouter's reasoning state and relayed
errors; the statuses and headers real endpoints send; what a stopping run keeps of the answers already
on their way. Streamed forms: `test_streamed_replies.py`."""

from __future__ import annotations

import json

import pytest

from envscaler_core.llm import LLMGateway
from tests.fixtures.llm import mock_llm_settings
from tests.llm.helpers import call_rows, scripted_gateway as gateway, stop_after_first_attempt
from tests.llm.scripted_endpoint import completion

TOOLS = [{"type": "function", "function": {"name": "cancel_order", "parameters": {"type": "object", "properties": {
    "order_id": {"type": "string"}}}}},
         {"type": "function", "function": {"name": "list_orders", "parameters": {"type": "object", "properties": {}}}}]
USER = [{"role": "user", "content": "cancel order 4"}]


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


def test_opaque_reasoning_state_goes_back_with_its_nulls(endpoint) -> None:
    """Anthropic's reasoning through OpenRouter writes `"signature": null` on a detail still being made,
    and Gemini's call-level `extra_content` may hold nulls: the provider checks that state as it sent it,
    so nothing in it is dropped (a null elsewhere in the message still is)."""
    details = [{"type": "reasoning.text", "text": "cancel it", "signature": None, "format": "anthropic-claude-v1",
                "index": 0}]
    extra = {"google": {"thought_signature": "c2ln", "cache": None}}
    endpoint.script(completion(None, finish="tool_calls", refusal=None, audio=None, reasoning_details=details, tool_calls=[
        {"id": "tool_1", "type": "function", "extra_content": extra,
         "function": {"name": "cancel_order", "arguments": '{"order_id": "4"}'}}]), completion("Cancelled."))
    gw = gateway(endpoint)
    first = gw.chat_sync(USER, tools=TOOLS)
    gw.chat_sync([*USER, first.message, {"role": "tool", "tool_call_id": "tool_1", "content": "ok"}], tools=TOOLS)
    sent = endpoint.requests[1]["messages"][1]
    assert sent["reasoning_details"] == details
    assert sent["tool_calls"][0]["extra_content"] == extra
    assert "refusal" not in sent and "audio" not in sent


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

@pytest.mark.parametrize("cancels", [1, 2])
def test_an_answer_arriving_while_the_run_stops_is_recorded_and_not_paid_again(endpoint, store, cancels) -> None:
    """The run stops (a run-stopping error cancels the work in flight): an answer that arrives within the
    grace is recorded like any answer, so the resume is served it from the cache. Before, the store held
    a third of what the proxy delivered, and the resume paid for the rest again. Cancelled twice (a
    cancelled `gather` cancels its children, and the BFCL eval's `run_eval` cancels them again), the
    second cancel used to end the grace: an outside check's Ctrl-C kept 1 of 6 such answers."""
    import asyncio

    from tests.llm.scripted_endpoint import TRICKLE

    endpoint.script({TRICKLE: (0.3, 2), **completion("Order 4 is cancelled.")})
    settings = mock_llm_settings(endpoint.base_url, backoff_max_s=0.05)

    async def stopped_run() -> None:
        gw = LLMGateway(settings, store=store, run_id="r1")
        call = asyncio.ensure_future(gw.chat(USER))
        await asyncio.sleep(0.2)  # the request is in flight, its answer on the way
        for _ in range(cancels):
            call.cancel()
            await asyncio.sleep(0.05)  # the call is in its grace
        with pytest.raises(asyncio.CancelledError):
            await call
        await gw.aclose()

    asyncio.run(stopped_run())
    [row] = call_rows(store, "r1")
    assert (row["status"], row["prompt_tokens"], row["completion_tokens"]) == ("ok", 11, 7)
    resumed = LLMGateway(settings, store=store, run_id="r1").chat_sync(USER)
    assert resumed.cached and resumed.message["content"] == "Order 4 is cancelled." and len(endpoint.requests) == 1


def test_a_call_stopped_between_attempts_records_what_its_refused_attempts_billed(endpoint, store) -> None:
    """A 200 whose choice finished with "error" is billed and asked again after a backoff; the run stopped
    in that backoff (its sibling ran out of retries). The call ended with no row, and the tokens its
    refused attempt billed were in no record (an outside check: 6 billed attempts missing from the store)."""
    import asyncio

    endpoint.script(completion("partial", finish="error"), completion("never asked"))
    # the backoff is drawn uniformly below its ceiling (full jitter): a 5 s ceiling drew less than the wait
    # below about one time in five and the call was asked again and answered; at 600 s, one in ~500
    settings = mock_llm_settings(endpoint.base_url, backoff_base_s=600.0, backoff_max_s=600.0)

    gw = LLMGateway(settings, store=store, run_id="r1")
    asyncio.run(stop_after_first_attempt(gw, endpoint, USER, 1.0))  # it waits out its backoff to ask again
    [row] = call_rows(store, "r1")
    assert (row["status"], row["prompt_tokens"], row["completion_tokens"]) == ("error", 11, 7)
    assert len(endpoint.requests) == 1


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
