"""Spec: how a reply's content, reasoning and calls are read and kept, and what the history sent back
holds, over HTTP through the real `openai` client against the scripted raw endpoint (forms from an
outside check's reshaping proxy that the mock never sends):

- a generation the server stopped before it finished (`abort`, ...) is never read as an answer: asked again;
- only the run of calls that ends a swallowed reasoning is the turn's calls (earlier drafts are not);
- a call read out of the reasoning is not left in the reasoning text as well (SFT rows would hold it twice);
- an endpoint that refuses a history without the reasoning of its tool-call turns (DeepSeek V3.2, Kimi K2
  thinking) gets it back, learned from its 400, for the rest of the gateway's life.
"""

from __future__ import annotations

import json

import pytest

from envscaler_core.llm import LLMGateway, LLMOutputInvalid, LLMRequestRejected
from envscaler_core.prompts.mine import JUDGE_STATEFUL, StatefulJudgement, TaskInput
from tests.fixtures.llm import mock_llm_settings
from tests.llm.scripted_endpoint import STATUS, completion

TASK = TaskInput(task="Cancel order 4.")
ANSWER = {"analysis": "It changes an order.", "stateful": True}
GOOD = json.dumps(ANSWER)
TOOLS = [{"type": "function", "function": {"name": "add_credits", "parameters": {"type": "object", "properties": {
    "member_id": {"type": "string"}, "amount": {"type": "integer"}}}}}]
REAL = {"member_id": "M-1", "amount": 5}
DRAFT = {"member_id": "DRAFT", "amount": "DRAFT"}


def gateway(endpoint, **overrides) -> LLMGateway:
    return LLMGateway(mock_llm_settings(endpoint.base_url, cache=False, **overrides))


def calls_of(message) -> list[tuple[str, dict]]:
    return [(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in message.get("tool_calls") or []]


def native_call(arguments: str) -> dict:
    return {"id": "call_1", "type": "function", "function": {"name": "add_credits", "arguments": arguments}}


# ---- D: a generation the server stopped is asked again, never parsed -------------------------------

@pytest.mark.parametrize("finish", ["abort", "ABORTED", "cancelled", "MALFORMED_FUNCTION_CALL", "other"])
def test_a_structured_reply_the_server_stopped_is_asked_again_as_it_was(endpoint, finish) -> None:
    endpoint.script(completion(GOOD[: len(GOOD) // 2], finish=finish), completion(GOOD))
    assert gateway(endpoint).structured_sync(JUDGE_STATEFUL, TASK) == StatefulJudgement(**ANSWER)
    assert len(endpoint.requests) == 2 and endpoint.requests[0] == endpoint.requests[1]  # the same request, same room
    assert all("max_tokens" not in r and "max_completion_tokens" not in r for r in endpoint.requests)


def test_cut_off_call_arguments_of_an_aborted_turn_are_never_executed(endpoint) -> None:
    arguments = json.dumps(REAL)
    endpoint.script(completion(None, finish="abort", tool_calls=[native_call(arguments[: len(arguments) // 2])]),
                    completion(None, finish="tool_calls", tool_calls=[native_call(arguments)]))
    reply = gateway(endpoint).chat_sync([{"role": "user", "content": "add 5 credits to M-1"}], tools=TOOLS)
    assert calls_of(reply.message) == [("add_credits", REAL)] and len(endpoint.requests) == 2


def test_a_truncated_text_of_an_aborted_turn_is_not_kept(endpoint) -> None:
    endpoint.script(completion("Your credits were", finish="abort"), completion("Your credits were added."))
    reply = gateway(endpoint).chat_sync([{"role": "user", "content": "thanks"}], tools=TOOLS)
    assert reply.message["content"] == "Your credits were added."


def test_a_turn_the_server_stops_every_time_fails_with_its_reason(endpoint) -> None:
    endpoint.script(completion("Your credits", finish="abort"))
    with pytest.raises(LLMOutputInvalid) as err:
        gateway(endpoint).chat_sync([{"role": "user", "content": "thanks"}], tools=TOOLS)
    assert "stopped generating before the reply was complete" in err.value.reason and "'abort'" in err.value.reason
    assert len(endpoint.requests) == 3  # asked again twice, like a cut-off reply


def test_a_structured_reply_the_server_stops_every_time_gets_a_repair_turn(endpoint) -> None:
    endpoint.script(completion(GOOD[:10], finish="abort"), completion(GOOD[:10], finish="abort"),
                    completion(GOOD[:10], finish="abort"), completion(GOOD))
    assert gateway(endpoint, repair_attempts=1).structured_sync(JUDGE_STATEFUL, TASK).stateful is True
    assert "stopped generating" in endpoint.requests[-1]["messages"][-1]["content"]


# ---- E and K: calls at the end of a swallowed reasoning ---------------------------------------------

def _hermes(args: dict) -> str:
    return "<tool_call>\n" + json.dumps({"name": "add_credits", "arguments": args}) + "\n</tool_call>"


def _qwen_coder(args: dict) -> str:
    params = "".join(f"<parameter={k}>\n{v}\n</parameter>\n" for k, v in args.items())
    return f"<tool_call>\n<function=add_credits>\n{params}</function>\n</tool_call>"


def _mistral(args: dict) -> str:
    return "[TOOL_CALLS]add_credits[ARGS]" + json.dumps(args)


def _kimi(args: dict) -> str:
    return ("<|tool_calls_section_begin|><|tool_call_begin|>functions.add_credits:0<|tool_call_argument_begin|>"
            + json.dumps(args) + "<|tool_call_end|><|tool_calls_section_end|>")


def _pythonic(args: dict) -> str:
    return "[add_credits(" + ", ".join(f"{k}={v!r}" for k, v in args.items()) + ")]"


DIALECTS = {"hermes": _hermes, "qwen3-coder": _qwen_coder, "mistral": _mistral, "kimi": _kimi, "pythonic": _pythonic}


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_draft_call_in_the_reasoning_is_not_executed_only_the_final_run_is(endpoint, dialect) -> None:
    write = DIALECTS[dialect]
    reasoning = f"First idea:\n{write(DRAFT)}\nNo wait, that is wrong. Final:\n{write(REAL)}"
    endpoint.script(completion(None, reasoning_content=reasoning))
    reply = gateway(endpoint).chat_sync([{"role": "user", "content": "add 5 credits to M-1"}], tools=TOOLS)
    assert calls_of(reply.message) == [("add_credits", REAL)]
    # K: the call is the turn's call once, not again as reasoning text; the draft and the prose stay reasoning
    kept = reply.message["reasoning_content"]
    assert kept.startswith("First idea:") and kept.endswith("Final:") and "M-1" not in kept and "DRAFT" in kept


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_run_of_calls_ending_the_reasoning_is_all_the_turns_calls(endpoint, dialect) -> None:
    write = DIALECTS[dialect]
    other = {"member_id": "M-2", "amount": 1}
    joiner = "\n" if dialect != "pythonic" else ""
    run = write(REAL) + joiner + write(other) if dialect != "pythonic" else \
        "[" + _pythonic(REAL)[1:-1] + ", " + _pythonic(other)[1:-1] + "]"
    endpoint.script(completion(None, reasoning_content="I need to add both.\n\n" + run))
    reply = gateway(endpoint).chat_sync([{"role": "user", "content": "add credits"}], tools=TOOLS)
    assert calls_of(reply.message) == [("add_credits", REAL), ("add_credits", other)]
    assert reply.message["reasoning_content"] == "I need to add both."


def test_a_reasoning_that_is_only_the_call_is_no_reasoning_at_all(endpoint) -> None:
    endpoint.script(completion(None, reasoning_content=_hermes(REAL)))
    reply = gateway(endpoint).chat_sync([{"role": "user", "content": "add credits"}], tools=TOOLS)
    assert calls_of(reply.message) == [("add_credits", REAL)] and "reasoning_content" not in reply.message


def test_a_call_read_from_an_unclosed_think_leaves_the_stored_reasoning_too(endpoint) -> None:
    endpoint.script(completion("<think>Let me add them.\n" + _hermes(REAL)))
    reply = gateway(endpoint).chat_sync([{"role": "user", "content": "add credits"}], tools=TOOLS)
    assert calls_of(reply.message) == [("add_credits", REAL)]
    assert reply.message["reasoning_content"] == "Let me add them."


# ---- F: the reasoning of tool-call turns, for endpoints that require it back -----------------------

DEEPSEEK_400 = {STATUS: 400, "error": {
    "message": "Missing `reasoning_content` field in the assistant message at message index 2. For more information, "
               "please refer to https://api-docs.deepseek.com/guides/thinking_mode#tool-calls",
    "type": "invalid_request_error", "param": None, "code": "invalid_request_error"}}
KIMI_400 = {STATUS: 400, "error": {
    "message": "thinking is enabled but reasoning_content is missing in assistant tool call message at index 2",
    "type": "invalid_request_error"}}


def history(reasoning: str | None = "I should add the credits.") -> list[dict]:
    turn = {"role": "assistant", "content": None, "tool_calls": [native_call(json.dumps(REAL))]}
    if reasoning is not None:
        turn["reasoning_content"] = reasoning
    return [{"role": "system", "content": "You help members."}, {"role": "user", "content": "add 5 credits to M-1"},
            turn, {"role": "tool", "tool_call_id": "call_1", "content": "ok"}]


@pytest.mark.parametrize("rejection", [DEEPSEEK_400, KIMI_400], ids=["deepseek-v3.2", "kimi-k2"])
def test_reasoning_of_tool_call_turns_is_sent_back_once_the_endpoint_asks_for_it(endpoint, rejection) -> None:
    endpoint.script(rejection, completion("Done: 5 credits added."), completion("Anything else?"))
    gw = gateway(endpoint)
    reply = gw.chat_sync(history(), tools=TOOLS)
    assert reply.message["content"] == "Done: 5 credits added."
    first, second = endpoint.requests[0]["messages"][2], endpoint.requests[1]["messages"][2]
    assert "reasoning_content" not in first and second["reasoning_content"] == "I should add the credits."
    # remembered: the next turn is sent with it at once; a turn without tool calls still goes without it
    turns = history() + [{"role": "assistant", "content": "Done.", "reasoning_content": "say so"},
                         {"role": "user", "content": "thanks"}]
    gw.chat_sync(turns, tools=TOOLS)
    assert len(endpoint.requests) == 3
    sent = endpoint.requests[2]["messages"]
    assert sent[2]["reasoning_content"] == "I should add the credits." and "reasoning_content" not in sent[4]


def test_a_tool_call_turn_that_had_no_reasoning_is_sent_with_a_non_empty_one(endpoint) -> None:
    endpoint.script(DEEPSEEK_400, completion("Done."))
    gateway(endpoint).chat_sync(history(reasoning=None), tools=TOOLS)
    assert endpoint.requests[1]["messages"][2]["reasoning_content"].strip() == ""
    assert endpoint.requests[1]["messages"][2]["reasoning_content"]


def test_an_endpoint_that_still_refuses_with_the_reasoning_is_a_rejected_request(endpoint) -> None:
    endpoint.script(DEEPSEEK_400)
    with pytest.raises(LLMRequestRejected, match="reasoning_content"):
        gateway(endpoint).chat_sync(history(), tools=TOOLS)
    assert len(endpoint.requests) == 2  # asked once more with the reasoning, not in a loop


def test_other_400s_do_not_bring_the_reasoning_back(endpoint) -> None:
    endpoint.script({STATUS: 400, "error": {"message": "The reasoning_content is an intermediate result for display "
                                            "purposes only. Please remove the reasoning_content from your message."}})
    with pytest.raises(LLMRequestRejected):
        gateway(endpoint).chat_sync(history(), tools=TOOLS)
    assert len(endpoint.requests) == 1 and "reasoning_content" not in endpoint.requests[0]["messages"][2]


def test_the_same_reasoning_under_two_field_names_is_kept_once(endpoint) -> None:
    """vLLM sends a reasoning parser's text as both `reasoning` and `reasoning_content`; an outside check's
    SFT rows held every such turn's reasoning twice."""
    endpoint.script(completion("Done.", reasoning="I will answer.", reasoning_content="I will answer."))
    reply = gateway(endpoint).chat_sync([{"role": "user", "content": "thanks"}], tools=TOOLS)
    assert reply.message["reasoning_content"] == "I will answer."
