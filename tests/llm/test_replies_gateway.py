"""Spec: the gateway reads replies in forms the mock never sends, from a scripted raw endpoint over
HTTP through the real `openai` client: what it parses, what it refuses, what it tells the model in the
repair turn, how it handles a cut-off reply, and how it accounts for a response without usage."""

from __future__ import annotations

import json

import pytest

from envscaler_core.llm import LLMGateway, LLMOutputInvalid, LLMRequestRejected
from envscaler_core.prompts.mine import JUDGE_STATEFUL, StatefulJudgement, TaskInput
from envscaler_core.store import Store
from tests.fixtures.llm import mock_llm_settings
from tests.llm.helpers import call_rows
from tests.llm.scripted_endpoint import STATUS, completion

TASK = TaskInput(task="Cancel order 4.")
ANSWER = {"analysis": "It changes an order.", "stateful": True}
GOOD = json.dumps(ANSWER)


def gateway(endpoint, store=None, **overrides) -> LLMGateway:
    settings = mock_llm_settings(endpoint.base_url, cache=False, **overrides)
    return LLMGateway(settings, store=store, run_id="r1" if store is not None else None)


@pytest.fixture
def store(tmp_path):
    with Store.from_url(f"duckdb:///{tmp_path / 'replies.duckdb'}") as s:
        yield s


def last_user_turn(endpoint, index: int = -1) -> str:
    return endpoint.requests[index]["messages"][-1]["content"]


def test_reasoning_with_a_draft_is_kept_in_the_audit_log_but_never_parsed(endpoint, store) -> None:
    draft = json.dumps({"analysis": "draft", "stateful": False})
    endpoint.script(completion(f"<think>First thought: {draft}\n```json\n{draft}\n```</think>\n{GOOD}"))
    out = gateway(endpoint, store).structured_sync(JUDGE_STATEFUL, TASK)
    assert out == StatefulJudgement(**ANSWER)
    [row] = call_rows(store, "r1")
    assert row["status"] == "ok" and len(endpoint.requests) == 1
    with store.engine.connect() as conn:
        from sqlalchemy import text
        response = json.loads(conn.execute(text("SELECT response FROM llm_calls")).scalar_one())
    assert "First thought" in response["message"]["content"]


@pytest.mark.parametrize("content", [
    f"Reasoning about {{braces}} and `fences`.\n</think>\n\n{GOOD}",  # template opened <think> in the prompt
    [{"type": "text", "text": GOOD[:10]}, {"type": "text", "text": GOOD[10:]}],  # content as parts
    "```JSON\n" + json.dumps(ANSWER, indent=4) + "\n```",
    "{'analysis': 'It changes an order.', 'stateful': True}",  # a Python dict
    '{\n  "analysis": "It changes an order.", // why\n  "stateful": true,\n}',  # comments, trailing comma
    "Example:\n```json\n{\"analysis\": \"<why>\", \"stateful\": \"<yes or no>\"}\n```\nAnswer:\n```json\n" + GOOD + "\n```",
    '{"StatefulJudgement": ' + GOOD + "}",  # wrapped once under a non-field key
    json.dumps(GOOD),  # double-encoded
], ids=["orphan-close", "parts", "upper-tag", "python", "comments", "example-first", "wrapped", "double"])
def test_forms_the_mock_does_not_send_are_read_as_the_same_answer(endpoint, content) -> None:
    endpoint.script(completion(content))
    assert gateway(endpoint).structured_sync(JUDGE_STATEFUL, TASK) == StatefulJudgement(**ANSWER)
    assert len(endpoint.requests) == 1


def test_a_reasoning_field_only_reply_takes_the_object_that_ends_the_reasoning(endpoint) -> None:
    endpoint.script(completion(None, reasoning_content=f"Let me think about {{x}}.\n{GOOD}"))
    assert gateway(endpoint).structured_sync(JUDGE_STATEFUL, TASK) == StatefulJudgement(**ANSWER)


def test_the_repair_turn_names_the_field_what_was_expected_and_what_was_found(endpoint) -> None:
    endpoint.script(completion('{"analysis": "x", "stateful": "perhaps"}'), completion(GOOD))
    gateway(endpoint).structured_sync(JUDGE_STATEFUL, TASK)
    repair = last_user_turn(endpoint)
    assert "`stateful`" in repair and "valid boolean" in repair and "'perhaps'" in repair, repair
    assert endpoint.requests[1]["messages"][-2] == {"role": "assistant", "content": '{"analysis": "x", "stateful": "perhaps"}'}


def test_two_different_objects_that_both_fit_are_refused_as_ambiguous(endpoint) -> None:
    other = json.dumps({"analysis": "other", "stateful": False})
    endpoint.script(completion(f"```json\n{GOOD}\n```\nor maybe\n```json\n{other}\n```"), completion(GOOD))
    gateway(endpoint).structured_sync(JUDGE_STATEFUL, TASK)
    assert "2 different JSON objects" in last_user_turn(endpoint)


def test_a_refusal_gets_a_repair_turn_that_quotes_it(endpoint) -> None:
    endpoint.script(completion(None, refusal="I can't help with that."), completion(GOOD))
    assert gateway(endpoint).structured_sync(JUDGE_STATEFUL, TASK).stateful is True
    assert "refusal" in last_user_turn(endpoint) and "I can't help with that." in last_user_turn(endpoint)


def test_a_cut_off_reply_is_asked_again_with_more_room_and_never_parsed(endpoint, store) -> None:
    endpoint.script(completion(GOOD, finish="length"), completion(GOOD))  # complete-looking, but cut off
    out = gateway(endpoint, store).structured_sync(JUDGE_STATEFUL, TASK)
    assert out.stateful is True and len(endpoint.requests) == 2
    assert "max_tokens" not in endpoint.requests[0] and endpoint.requests[1]["max_tokens"] >= 1024
    assert endpoint.requests[1]["messages"] == endpoint.requests[0]["messages"]  # same question, more room
    [row] = call_rows(store, "r1")
    assert (row["attempts"], row["repairs"]) == (2, 0)


def test_a_reply_cut_off_at_the_ceiling_gets_a_repair_turn_saying_so(endpoint, store) -> None:
    endpoint.script(completion(GOOD[:20], finish="length"))
    with pytest.raises(LLMOutputInvalid) as err:
        gateway(endpoint, store, max_output_tokens=2048, repair_attempts=1).structured_sync(JUDGE_STATEFUL, TASK)
    assert "cut off by the output limit" in err.value.reason
    rooms = [r.get("max_tokens") for r in endpoint.requests]
    assert rooms == [None, 1024, 2048, None, 1024, 2048]  # the room grows to the ceiling, then one repair turn
    assert "cut off" in last_user_turn(endpoint) and "only the JSON object" in last_user_turn(endpoint)
    assert call_rows(store, "r1")[0]["status"] == "output_invalid"


@pytest.mark.parametrize("rejection", [
    {"error": {"message": "This model's maximum context length is 8192 tokens. However, you requested 9001 tokens "
               "(977 in the messages, 8024 in the completion).", "type": "invalid_request_error",
               "code": "context_length_exceeded"}},  # OpenAI's form
    {"object": "error", "message": "max_tokens must be at most 4096", "type": "BadRequestError", "code": 400},  # vLLM's
], ids=["openai", "vllm"])
def test_more_room_that_the_model_cannot_give_keeps_the_cut_off_reply(endpoint, store, rejection) -> None:
    """The retry differs from the answered request only by its room: its 400 says the room did not fit,
    so the run goes on as if the ceiling had been reached (a repair turn), instead of failing the call."""
    endpoint.script(completion(GOOD[:20], finish="length"), {STATUS: 400, **rejection}, completion(GOOD))
    out = gateway(endpoint, store, repair_attempts=1).structured_sync(JUDGE_STATEFUL, TASK)
    assert out == StatefulJudgement(**ANSWER)
    assert [r.get("max_tokens") for r in endpoint.requests] == [None, 1024, None]
    assert "cut off" in last_user_turn(endpoint)
    assert call_rows(store, "r1")[0]["status"] == "ok"


def test_a_first_request_rejected_with_400_is_still_an_error(endpoint) -> None:
    endpoint.script({STATUS: 400, "error": {"message": "unknown field 'tools'"}})
    with pytest.raises(LLMRequestRejected, match="unknown field 'tools'"):
        gateway(endpoint).structured_sync(JUDGE_STATEFUL, TASK)


def test_a_content_filter_stop_is_not_parsed(endpoint) -> None:
    endpoint.script(completion(GOOD, finish="content_filter"), completion(GOOD))
    assert gateway(endpoint).structured_sync(JUDGE_STATEFUL, TASK).stateful is True
    assert "content filter" in last_user_turn(endpoint) and len(endpoint.requests) == 2


def test_missing_usage_is_estimated_and_marked_in_the_row_and_per_stage(endpoint, store) -> None:
    endpoint.script(completion(GOOD, usage=False))
    gw = gateway(endpoint, store)
    gw.structured_sync(JUDGE_STATEFUL, TASK)
    [row] = call_rows(store, "r1")
    assert row["prompt_tokens"] > 0 and row["completion_tokens"] > 0
    with store.engine.connect() as conn:
        from sqlalchemy import text
        estimated = conn.execute(text("SELECT estimated_tokens FROM llm_calls")).scalar_one()
    assert estimated == row["prompt_tokens"] + row["completion_tokens"]
    assert gw.usage_by_stage()["mine"]["estimated_tokens"] == estimated
    assert store.llm_usage("r1")["mine"]["estimated_tokens"] == estimated


def test_reported_usage_is_not_marked_as_estimated(endpoint, store) -> None:
    endpoint.script(completion(GOOD))
    gw = gateway(endpoint, store)
    gw.structured_sync(JUDGE_STATEFUL, TASK)
    assert gw.usage_by_stage()["mine"]["estimated_tokens"] == 0
    assert (call_rows(store, "r1")[0]["prompt_tokens"], store.llm_usage("r1")["mine"]["estimated_tokens"]) == (11, 0)


TOOLS = [{"type": "function", "function": {"name": "cancel_order", "parameters": {"type": "object", "properties": {
    "order_id": {"type": "string"}}}}}, {"type": "function", "function": {"name": "list_orders", "parameters": {
        "type": "object", "properties": {}}}}]


def test_a_chat_turn_comes_back_in_one_shape_whatever_the_endpoint_sent(endpoint) -> None:
    endpoint.script(completion("<think>Cancel it; maybe say ###STOP###?</think>Cancelling now.", tool_calls=[
        {"id": "toolu_01XyZ", "function": {"name": "cancel_order", "arguments": {"order_id": "4"}}},  # object, no type
        {"id": "toolu_01XyZ", "type": "function", "function": {"name": "list_orders", "arguments": ""}},
    ], reasoning_content=None, refusal=None, usage=None))
    reply = gateway(endpoint).chat_sync([{"role": "user", "content": "cancel order 4"}], stage="agent", tools=TOOLS)
    msg = reply.message
    assert msg["content"] == "Cancelling now." and msg["reasoning_content"] == "Cancel it; maybe say ###STOP###?"
    assert [(c["type"], c["function"]["name"], json.loads(c["function"]["arguments"])) for c in msg["tool_calls"]] == [
        ("function", "cancel_order", {"order_id": "4"}), ("function", "list_orders", {})]
    assert len({c["id"] for c in msg["tool_calls"]}) == 2 and msg["tool_calls"][0]["id"] == "toolu_01XyZ"
    assert reply.usage_estimated and set(msg) == {"role", "content", "tool_calls", "reasoning_content"}


def test_tool_calls_written_as_text_by_a_server_without_a_tool_parser_are_read(endpoint) -> None:
    endpoint.script(completion('<tool_call>\n{"name": "cancel_order", "arguments": {"order_id": "4"}}\n</tool_call>'))
    msg = gateway(endpoint).chat_sync([{"role": "user", "content": "x"}], stage="agent", tools=TOOLS).message
    assert msg["content"] is None and msg["tool_calls"][0]["function"] == {"name": "cancel_order",
                                                                          "arguments": '{"order_id": "4"}'}


def test_earlier_turns_reasoning_is_kept_in_the_history_but_not_sent_back(endpoint) -> None:
    endpoint.script(completion("ok"))
    history = [{"role": "user", "content": "hi"},
               {"role": "assistant", "content": "hello", "reasoning_content": "they greeted me"},
               {"role": "user", "content": "bye"}]
    gateway(endpoint).chat_sync(history, stage="agent")
    assert endpoint.requests[0]["messages"][1] == {"role": "assistant", "content": "hello"}


def test_a_chat_turn_still_cut_off_with_more_room_is_an_unusable_output(endpoint) -> None:
    endpoint.script(completion(None, finish="length", tool_calls=[
        {"id": "c1", "type": "function", "function": {"name": "cancel_order", "arguments": '{"order_'}}]))
    with pytest.raises(LLMOutputInvalid, match="cut off"):
        gateway(endpoint, max_output_tokens=1024).chat_sync([{"role": "user", "content": "x"}], stage="agent", tools=TOOLS)
    assert len(endpoint.requests) == 2


def test_a_chat_turn_with_only_reasoning_is_an_unusable_output(endpoint) -> None:
    endpoint.script(completion("<think>I should say hello but I keep thinking"))
    with pytest.raises(LLMOutputInvalid, match="only reasoning"):
        gateway(endpoint).chat_sync([{"role": "user", "content": "x"}], stage="user_sim")


@pytest.mark.parametrize("finish", ["max_tokens", "max_output_tokens"])
def test_other_apis_words_for_a_cut_off_reply_are_understood(endpoint, finish) -> None:
    endpoint.script(completion(GOOD, finish=finish), completion(GOOD))
    assert gateway(endpoint).structured_sync(JUDGE_STATEFUL, TASK).stateful is True
    assert len(endpoint.requests) == 2


def test_usage_under_input_and_output_token_names_is_read_not_estimated(endpoint, store) -> None:
    endpoint.script(completion(GOOD, usage={"input_tokens": 30, "output_tokens": 5}))
    gateway(endpoint, store).structured_sync(JUDGE_STATEFUL, TASK)
    row = call_rows(store, "r1")[0]
    assert (row["prompt_tokens"], row["completion_tokens"], store.llm_usage("r1")["mine"]["estimated_tokens"]) == (30, 5, 0)


@pytest.mark.parametrize("finish", ["MAX_TOKENS", "max_length"])
def test_cut_off_words_in_other_spellings_are_understood(endpoint, finish) -> None:
    endpoint.script(completion(GOOD[:20], finish=finish), completion(GOOD))
    assert gateway(endpoint).structured_sync(JUDGE_STATEFUL, TASK).stateful is True
    assert len(endpoint.requests) == 2 and endpoint.requests[1].get("max_tokens")


def test_a_json_mode_reply_the_server_refused_with_400_is_read_from_failed_generation(endpoint) -> None:
    """Groq: HTTP 400 `json_validate_failed`, the model's text in `failed_generation`; asking again
    would work too, but the answer is already there (and a 400 would otherwise stop the run)."""
    endpoint.script({STATUS: 400, "error": {
        "message": "Failed to generate JSON. Please adjust your prompt. See 'failed_generation' for more details.",
        "type": "invalid_request_error", "code": "json_validate_failed",
        "failed_generation": f"Here is the JSON:\n```json\n{GOOD}\n```"}})
    assert gateway(endpoint).structured_sync(JUDGE_STATEFUL, TASK) == StatefulJudgement(**ANSWER)
    assert len(endpoint.requests) == 1


def test_a_tool_call_the_server_refused_with_400_is_read_from_failed_generation(endpoint) -> None:
    tools = [{"type": "function", "function": {"name": "cancel_order", "parameters": {
        "type": "object", "properties": {"order_id": {"type": "integer"}}}}}]
    endpoint.script({STATUS: 400, "error": {
        "message": "Failed to call a function. Please adjust your prompt.", "type": "invalid_request_error",
        "code": "tool_use_failed",
        "failed_generation": '<tool_call>{"name": "cancel_order", "arguments": {"order_id": 4}}</tool_call>'}})
    reply = gateway(endpoint).chat_sync([{"role": "user", "content": "Cancel order 4."}], tools=tools)
    [call] = reply.message["tool_calls"]
    assert call["function"] == {"name": "cancel_order", "arguments": '{"order_id": 4}'}


def test_a_200_whose_choice_finished_with_an_upstream_error_is_retried_not_kept(endpoint, store) -> None:
    """OpenRouter relays a provider failure mid-generation as a 200 with `finish_reason: "error"`."""
    failed = completion("", finish="error")
    failed["choices"][0]["error"] = {"code": 502, "message": "Upstream error from provider"}
    endpoint.script(failed, completion(GOOD))
    assert gateway(endpoint, store, backoff_base_s=0.01).structured_sync(JUDGE_STATEFUL, TASK).stateful is True
    assert len(endpoint.requests) == 2
    [row] = call_rows(store, "r1")
    assert row["status"] == "ok" and row["attempts"] == 2


def test_a_batch_answer_sent_as_a_bare_array_or_json_lines_is_read(endpoint) -> None:
    from envscaler_core.prompts.mine import JUDGE_STATEFUL_BATCH, StatefulJudgements, TaskBatchInput

    items = [{"id": 1, "analysis": "changes an order", "stateful": True},
             {"id": 2, "analysis": "a fact question", "stateful": False}]
    endpoint.script(completion(json.dumps(items)), completion("\n".join(json.dumps(i) for i in items)))
    batch = TaskBatchInput.model_validate({"tasks": [{"id": 1, "task": "Cancel order 4."},
                                                     {"id": 2, "task": "What is 2+2?"}]})
    for _ in range(2):
        out = gateway(endpoint).structured_sync(JUDGE_STATEFUL_BATCH, batch)
        assert out == StatefulJudgements.model_validate({"judgements": items})
    assert len(endpoint.requests) == 2


def test_a_provider_error_wrapped_in_a_list_keeps_its_explanation(endpoint) -> None:
    endpoint.script({STATUS: 400, "__raw_body__": json.dumps([{"error": {
        "code": 400, "status": "INVALID_ARGUMENT",
        "message": "Function call is missing a thought_signature in functionCall parts."}}])})
    with pytest.raises(LLMRequestRejected, match="missing a thought_signature"):
        gateway(endpoint).structured_sync(JUDGE_STATEFUL, TASK)


def test_a_providers_extra_content_on_a_tool_call_goes_back_with_it(endpoint) -> None:
    """Gemini 3 rejects the next request unless each call's `extra_content` (its thought signature)
    comes back; exports leave it out (tests/export)."""
    signature = {"google": {"thought_signature": "CqQBAb=="}}
    tools = [{"type": "function", "function": {"name": "cancel_order", "parameters": {"type": "object"}}}]
    endpoint.script(completion(None, tool_calls=[{"id": "c1", "type": "function", "extra_content": signature,
                                                  "function": {"name": "cancel_order", "arguments": "{}"}}]),
                    completion("Done."))
    gw = gateway(endpoint)
    first = gw.chat_sync([{"role": "user", "content": "Cancel it."}], tools=tools)
    history = [{"role": "user", "content": "Cancel it."}, first.message,
               {"role": "tool", "tool_call_id": "c1", "content": "ok"}]
    gw.chat_sync(history, tools=tools)
    assert endpoint.requests[1]["messages"][1]["tool_calls"][0]["extra_content"] == signature


@pytest.mark.parametrize("code", ["json_validate_failed", "tool_use_failed"])
def test_a_refused_generation_with_nothing_to_read_is_asked_again(endpoint, code) -> None:
    """An empty `failed_generation` stopped the whole run (the request itself was fine)."""
    endpoint.script({STATUS: 400, "error": {"message": "Failed to generate JSON.", "type": "invalid_request_error",
                                            "code": code, "failed_generation": ""}}, completion(GOOD))
    assert gateway(endpoint, backoff_base_s=0.01).structured_sync(JUDGE_STATEFUL, TASK).stateful is True
    assert len(endpoint.requests) == 2


def test_a_refused_tool_call_naming_a_tool_not_offered_is_asked_again_not_taken_as_the_answer(endpoint) -> None:
    tools = [{"type": "function", "function": {"name": "cancel_order", "parameters": {
        "type": "object", "properties": {"order_id": {"type": "integer"}}}}}]
    endpoint.script({STATUS: 400, "error": {"message": "Failed to call a function.", "code": "tool_use_failed",
                                            "failed_generation": '<tool_call>{"name": "search_web", "arguments": {}}</tool_call>'}},
                    completion(None, tool_calls=[{"id": "c1", "type": "function",
                                                  "function": {"name": "cancel_order", "arguments": '{"order_id": 4}'}}]))
    reply = gateway(endpoint, backoff_base_s=0.01).chat_sync([{"role": "user", "content": "Cancel 4."}], tools=tools)
    assert [c["function"]["name"] for c in reply.message["tool_calls"]] == ["cancel_order"]
    assert len(endpoint.requests) == 2


def test_an_upstream_error_mid_generation_is_retried_whatever_its_code(endpoint) -> None:
    failed = completion("", finish="error")
    failed["choices"][0]["error"] = {"code": 400, "message": "Provider returned error"}
    endpoint.script(failed, completion(GOOD))
    assert gateway(endpoint, backoff_base_s=0.01).structured_sync(JUDGE_STATEFUL, TASK).stateful is True
    assert len(endpoint.requests) == 2


def test_json_lines_inside_a_fence_are_a_batch_answer(endpoint) -> None:
    from envscaler_core.prompts.mine import JUDGE_STATEFUL_BATCH, StatefulJudgements, TaskBatchInput

    items = [{"id": 1, "analysis": "changes an order", "stateful": True},
             {"id": 2, "analysis": "a fact question", "stateful": False}]
    endpoint.script(completion("Here:\n```json\n" + "\n".join(json.dumps(i) for i in items) + "\n```"))
    batch = TaskBatchInput.model_validate({"tasks": [{"id": 1, "task": "Cancel order 4."}, {"id": 2, "task": "2+2?"}]})
    out = gateway(endpoint).structured_sync(JUDGE_STATEFUL_BATCH, batch)
    assert out == StatefulJudgements.model_validate({"judgements": items}) and len(endpoint.requests) == 1
