"""Spec: tool calls a serving stack left as TEXT in `content` (no tool parser, or the wrong one) are
read in each family's dialect, only for offered tools; prose beside them stays the content; anything
unreadable or naming another tool stays text. Bodies are the raw forms those stacks send."""

from __future__ import annotations

import json

import pytest

from envscaler_core.llm.replies import normalise_assistant

TOOLS = [
    {"type": "function", "function": {"name": "get_policy", "parameters": {
        "type": "object", "properties": {"policy_id": {"type": "string"}}}}},
    {"type": "function", "function": {"name": "set_limit", "parameters": {
        "type": "object", "properties": {
            "account_id": {"type": "integer"}, "amount": {"type": "number"}, "notify": {"type": "boolean"},
            "tags": {"type": "array"}, "meta": {"type": "object"}, "note": {"type": "string"},
            "ref": {"type": ["string", "null"]}}}}},
    {"type": "function", "function": {"name": "list_accounts", "parameters": {"type": "object", "properties": {}}}},
]
GET = ("get_policy", '{"policy_id": "POL-100"}')
SET = ("set_limit", '{"account_id": 42, "amount": 99.5, "notify": true, "tags": ["a", "b"], "meta": {"k": 1}, "note": "007"}')
SET_ARGS = {"account_id": 42, "amount": 99.5, "notify": True, "tags": ["a", "b"], "meta": {"k": 1}, "note": "007"}
LIST = ("list_accounts", "{}")


def read(content, **message):
    msg = normalise_assistant({"role": "assistant", "content": content, **message}, TOOLS, turn=3)
    return msg, [(c["function"]["name"], c["function"]["arguments"]) for c in msg.get("tool_calls") or []]


DIALECTS = {
    "mistral-v11": ('[TOOL_CALLS]get_policy[ARGS]{"policy_id": "POL-100"}'
                    f'[TOOL_CALLS]set_limit[ARGS]{json.dumps(SET_ARGS)}</s>', [GET, SET], None),
    "mistral-v13": ('[TOOL_CALLS]get_policy[CALL_ID]a1B2c3D4e[ARGS]{"policy_id": "POL-100"}', [GET], None),
    "mistral-older": ('[TOOL_CALLS][{"name": "get_policy", "arguments": {"policy_id": "POL-100"}}]', [GET], None),
    "qwen3-coder": ("Let me look that up.\n<tool_call>\n<function=get_policy>\n<parameter=policy_id>\nPOL-100\n"
                    "</parameter>\n</function>\n</tool_call>\n<tool_call>\n<function=set_limit>\n"
                    "<parameter=account_id>\n42\n</parameter>\n<parameter=amount>\n99.5\n</parameter>\n"
                    "<parameter=notify>\ntrue\n</parameter>\n<parameter=tags>\n[\"a\", \"b\"]\n</parameter>\n"
                    "<parameter=meta>\n{\"k\": 1}\n</parameter>\n<parameter=note>\n007\n</parameter>\n"
                    "</function>\n</tool_call><|im_end|>", [GET, SET], "Let me look that up."),
    "seed-oss": ("<seed:tool_call>\n<function=get_policy>\n<parameter=policy_id>POL-100</parameter>\n</function>\n"
                 "</seed:tool_call>", [GET], None),
    "minimax-m2": ('<minimax:tool_call>\n<invoke name="get_policy">\n<parameter name="policy_id">POL-100</parameter>\n'
                   '</invoke>\n<invoke name="list_accounts">\n</invoke>\n</minimax:tool_call>', [GET, LIST], None),
    "glm-4.5": ("<tool_call>get_policy\n<arg_key>policy_id</arg_key>\n<arg_value>POL-100</arg_value>\n</tool_call>"
                "<tool_call>set_limit\n" + "".join(
                    f"<arg_key>{k}</arg_key>\n<arg_value>{v if isinstance(v, str) else json.dumps(v)}</arg_value>\n"
                    for k, v in SET_ARGS.items()) + "</tool_call><|observation|>", [GET, SET], None),
    "pythonic": ('[get_policy(policy_id="POL-100"), set_limit(account_id=42, amount=99.5, notify=True, '
                 "tags=['a', 'b'], meta={'k': 1}, note='007'), list_accounts()]", [GET, SET, LIST], None),
    "llama4-pythonic": ('<|python_start|>[get_policy(policy_id="POL-100")]<|python_end|><|eot|>', [GET], None),
    "deepseek-v3": ("<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_policy\n```json\n"
                    '{"policy_id": "POL-100"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜><｜end▁of▁sentence｜>', [GET], None),
    "deepseek-v3.1": ('I will check.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_policy<｜tool▁sep｜>{"policy_id": "POL-100"}'
                      "<｜tool▁call▁end｜><｜tool▁call▁begin｜>list_accounts<｜tool▁sep｜>{}<｜tool▁call▁end｜>"
                      "<｜tool▁calls▁end｜>", [GET, LIST], "I will check."),
    "kimi-k2": ('<|tool_calls_section_begin|><|tool_call_begin|>functions.get_policy:0<|tool_call_argument_begin|>'
                '{"policy_id": "POL-100"}<|tool_call_end|><|tool_calls_section_end|>', [GET], None),
    "hermes-unclosed": ('<tool_call>\n{"name": "get_policy", "arguments": {"policy_id": "POL-100"}}\n', [GET], None),
    "prose-then-json": ("I'll call it now.\n" + '{"name": "get_policy", "arguments": {"policy_id": "POL-100"}}\n'
                        '{"name": "list_accounts", "arguments": {}}', [GET, LIST], "I'll call it now."),
    "python-tag-eom": ('<|python_tag|>{"name": "get_policy", "parameters": {"policy_id": "POL-100"}}<|eom_id|>', [GET], None),
    "granite": ('<|tool_call|>[{"name": "get_policy", "arguments": {"policy_id": "POL-100"}}]<|end_of_text|>', [GET], None),
    "phi-4": ('functools[{"name": "get_policy", "arguments": {"policy_id": "POL-100"}}]<|end|>', [GET], None),
    "functionary-v3": ('>>>all\nChecking now.\n>>>get_policy\n{"policy_id": "POL-100"}\n>>>list_accounts\n{}',
                       [GET, LIST], "Checking now."),
    "functionary-v3.1": ('<function=get_policy>{"policy_id": "POL-100"}</function><|eom_id|>', [GET], None),
    "command-r": ('Plan: I will look up the policy.\nAction: ```json\n[{"tool_name": "get_policy", '
                  '"parameters": {"policy_id": "POL-100"}}]\n```', [GET], "Plan: I will look up the policy."),
}


@pytest.mark.parametrize("content,calls,prose", DIALECTS.values(), ids=DIALECTS.keys())
def test_each_familys_text_calls_are_read_exactly(content, calls, prose) -> None:
    msg, found = read(content)
    assert found == calls
    assert msg["content"] == prose


def test_ids_written_in_the_text_are_kept_and_missing_ones_are_made() -> None:
    msg, _ = read('[TOOL_CALLS]get_policy[CALL_ID]a1B2c3D4e[ARGS]{"policy_id": "POL-100"}'
                  '[TOOL_CALLS]list_accounts[ARGS]{}')
    assert [c["id"] for c in msg["tool_calls"]] == ["a1B2c3D4e", "call_3_1"]
    msg, _ = read(DIALECTS["kimi-k2"][0])
    assert msg["tool_calls"][0]["id"] == "functions.get_policy:0"


def test_xml_values_follow_the_schema_not_their_look() -> None:
    body = ("<tool_call>\n<function=set_limit>\n<parameter=note>\n42\n</parameter>\n<parameter=account_id>\nabc\n"
            "</parameter>\n<parameter=ref>\nnull\n</parameter>\n<parameter=extra>\n7\n</parameter>\n</function>\n</tool_call>")
    _, found = read(body)  # a string stays a string; a wrong-typed value is kept as written for the env to report
    assert found == [("set_limit", '{"note": "42", "account_id": "abc", "ref": null, "extra": "7"}')]


def test_glm_values_are_json_unless_the_schema_says_string() -> None:
    _, found = read("<tool_call>set_limit\n<arg_key>note</arg_key>\n<arg_value>[1]</arg_value>\n"
                    "<arg_key>tags</arg_key>\n<arg_value>[1]</arg_value>\n<arg_key>x</arg_key>\n<arg_value>hi there</arg_value>\n</tool_call>")
    assert found == [("set_limit", '{"note": "[1]", "tags": [1], "x": "hi there"}')]


NOT_CALLS = {
    "mistral-unoffered": '[TOOL_CALLS]rm_rf[ARGS]{"path": "/"}',
    "mistral-one-unoffered": '[TOOL_CALLS]get_policy[ARGS]{"policy_id": "1"}[TOOL_CALLS]rm_rf[ARGS]{}',
    "qwen-unoffered": "<tool_call>\n<function=rm_rf>\n<parameter=path>\n/\n</parameter>\n</function>\n</tool_call>",
    "glm-unoffered": "<tool_call>rm_rf\n<arg_key>path</arg_key>\n<arg_value>/</arg_value>\n</tool_call>",
    "pythonic-unoffered": '[rm_rf(path="/")]',
    "pythonic-positional": '[get_policy("POL-100")]',
    "pythonic-not-literal": "[get_policy(policy_id=open('/etc/passwd').read())]",
    "deepseek-unoffered": "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>rm_rf<｜tool▁sep｜>{}<｜tool▁call▁end｜>",
    "kimi-unoffered": "<|tool_call_begin|>functions.rm_rf:0<|tool_call_argument_begin|>{}<|tool_call_end|>",
    "prose-mentions-tool": "I could call get_policy with policy_id POL-100 if you want, or list_accounts().",
    "prose-shows-an-example-then-more-prose": ('For example {"name": "get_policy", "arguments": {"policy_id": "X"}} '
                                               "would fetch it. Shall I?"),
    "json-with-other-keys": 'Sure.\n{"name": "get_policy", "arguments": {"policy_id": "1"}, "why": "asked"}',
    "json-prose-name-only": 'Here is the tool I mean: {"name": "get_policy"}',
    "mistral-malformed-args": '[TOOL_CALLS]get_policy[ARGS]{"policy_id": "POL-1',
    "hermes-malformed-args": '<tool_call>\n{"name": "get_policy", "arguments": {"policy_id": POL-1}}\n</tool_call>',
    "deepseek-malformed-args": "<｜tool▁call▁begin｜>get_policy<｜tool▁sep｜>{policy_id: <｜tool▁call▁end｜>",
    "kimi-args-not-object": "<|tool_call_begin|>functions.get_policy:0<|tool_call_argument_begin|>[1]<|tool_call_end|>",
    "qwen-prose-between-parameters": ("<tool_call>\n<function=get_policy>\nhmm\n<parameter=policy_id>\n1\n</parameter>\n"
                                      "</function>\n</tool_call>"),
    "functionary-doctest-prose": ">>> print(1)\n1",
}


@pytest.mark.parametrize("content", NOT_CALLS.values(), ids=NOT_CALLS.keys())
def test_what_is_not_exactly_a_call_to_an_offered_tool_stays_text(content) -> None:
    msg, found = read(content)
    assert found == []
    assert msg["content"]


def test_no_offered_tools_means_no_calls_from_text() -> None:
    msg = normalise_assistant({"content": '[TOOL_CALLS]get_policy[ARGS]{"policy_id": "1"}'}, None)
    assert "tool_calls" not in msg


def test_tgi_notify_error_is_the_turns_text() -> None:
    msg = normalise_assistant({"role": "assistant", "tool_calls": [{"id": "0", "type": "function", "function": {
        "name": "notify_error", "arguments": {"error": "Your policy POL-100 is active."}, "description": None}}]}, TOOLS)
    assert msg == {"role": "assistant", "content": "Your policy POL-100 is active."}
    as_string = normalise_assistant({"tool_calls": [{"id": "0", "function": {
        "name": "notify_error", "arguments": '{"error": "Done."}'}}]}, TOOLS)
    assert as_string == {"role": "assistant", "content": "Done."}


def test_an_offered_tool_named_notify_error_is_a_call() -> None:
    tools = TOOLS + [{"type": "function", "function": {"name": "notify_error"}}]
    msg = normalise_assistant({"tool_calls": [{"id": "0", "function": {"name": "notify_error",
                                                                       "arguments": {"error": "x"}}}]}, tools)
    assert msg["tool_calls"][0]["function"] == {"name": "notify_error", "arguments": '{"error": "x"}'}


def test_a_chat_turn_a_reasoning_parser_swallowed_is_read_as_its_text() -> None:
    msg, found = read(None, reasoning_content="The task is done. Policy POL-100 is active.")
    assert (msg["content"], found, msg.get("reasoning_content")) == ("The task is done. Policy POL-100 is active.", [], None)


def test_calls_ending_a_swallowed_turn_are_its_calls_and_the_rest_stays_reasoning() -> None:
    reasoning = ('I should call the tool.\n<tool_call>\n{"name": "get_policy", "arguments": {"policy_id": "POL-100"}}\n'
                 "</tool_call>")
    msg, found = read("", reasoning_content=reasoning)
    assert (msg["content"], found, msg["reasoning_content"]) == (None, [GET], "I should call the tool.")
    msg, found = read(None, reasoning_content="I should call the tool.\n[TOOL_CALLS]get_policy[ARGS]{\"policy_id\": \"POL-100\"}")
    assert found == [GET]


def test_a_draft_call_inside_a_swallowed_turn_is_not_taken_as_its_call() -> None:
    reasoning = ('Maybe <tool_call>{"name": "get_policy", "arguments": {"policy_id": "X"}}</tool_call>? '
                 "No, I will just answer: the policy is active.")
    msg, found = read(None, reasoning_content=reasoning)
    assert (found, msg["content"]) == ([], reasoning)


def test_a_think_the_model_opened_and_never_closed_stays_reasoning() -> None:
    msg, found = read("<think>I should say hello but I keep thinking")
    assert (msg["content"], found, msg["reasoning_content"]) == ("", [], "I should say hello but I keep thinking")
