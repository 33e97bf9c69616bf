"""Spec: forms that real endpoints, servers and model families send, beyond the mock's realism, read
over HTTP from a scripted raw endpoint through the real `openai` client: other spellings of the
reasoning block (Gemini, Seed-OSS, Kimi, gpt-oss without special tokens), reasoning as parts of a
list `content` (Magistral), end-of-turn special tokens left in the text, an `<answer>` wrapper,
Llama's `<|python_tag|>` tool calls, gpt-oss' `<|call|>` after arguments, and an HTTP 200 that carries
an error object instead of a completion (OpenRouter)."""

from __future__ import annotations

import json

import pytest

from envscaler_core.llm import LLMGateway, LLMRequestRejected
from envscaler_core.prompts.mine import JUDGE_STATEFUL, StatefulJudgement, TaskInput
from envscaler_core.store import Store
from tests.fixtures.llm import mock_llm_settings
from tests.llm.helpers import call_rows
from tests.llm.scripted_endpoint import completion

TASK = TaskInput(task="Cancel order 4.")
ANSWER = {"analysis": "It changes an order.", "stateful": True}
GOOD = json.dumps(ANSWER)
DRAFT = 'Draft: {"analysis": "draft", "stateful": false} and ```json\n{"analysis": "d", "stateful": false}\n```'
TOOLS = [{"type": "function", "function": {"name": "cancel_order", "parameters": {"type": "object", "properties": {
    "order_id": {"type": "string"}}}}}]
USER = [{"role": "user", "content": "cancel order 4"}]


def gateway(endpoint, store=None) -> LLMGateway:
    settings = mock_llm_settings(endpoint.base_url, cache=False)
    return LLMGateway(settings, store=store, run_id="r1" if store is not None else None)


@pytest.fixture
def store(tmp_path):
    with Store.from_url(f"duckdb:///{tmp_path / 'forms.duckdb'}") as s:
        yield s


REASONING_SPELLINGS = {
    "gemini-thought": f"<thought>Weighing it. {DRAFT}</thought>\n",
    "seed-oss": f"<seed:think>Weighing it. {DRAFT}</seed:think>\n",
    "kimi": f"◁think▷Weighing it. {DRAFT}◁/think▷\n",
    "harmony-without-special-tokens": f"analysisWeighing it. {DRAFT}assistantfinal",
}


@pytest.mark.parametrize("prefix", REASONING_SPELLINGS.values(), ids=REASONING_SPELLINGS.keys())
def test_other_families_reasoning_blocks_are_set_aside_before_the_structured_answer(endpoint, prefix) -> None:
    endpoint.script(completion(prefix + GOOD))
    assert gateway(endpoint).structured_sync(JUDGE_STATEFUL, TASK) == StatefulJudgement(**ANSWER)
    assert len(endpoint.requests) == 1


@pytest.mark.parametrize("prefix", REASONING_SPELLINGS.values(), ids=REASONING_SPELLINGS.keys())
def test_other_families_reasoning_blocks_become_the_chat_turns_reasoning_not_its_text(endpoint, prefix) -> None:
    endpoint.script(completion(prefix + "Order 4 is cancelled."))
    msg = gateway(endpoint).chat_sync(USER, stage="agent", tools=TOOLS).message
    assert msg["content"] == "Order 4 is cancelled."
    assert msg["reasoning_content"].startswith("Weighing it.")


MAGISTRAL = [{"type": "thinking", "thinking": [{"type": "text", "text": f"Weighing it. {DRAFT}"}]}]


def test_thinking_parts_of_a_list_content_are_not_read_as_the_structured_answer(endpoint) -> None:
    endpoint.script(completion(MAGISTRAL + [{"type": "text", "text": GOOD}]))
    assert gateway(endpoint).structured_sync(JUDGE_STATEFUL, TASK) == StatefulJudgement(**ANSWER)


def test_thinking_parts_of_a_list_content_become_the_chat_turns_reasoning(endpoint) -> None:
    endpoint.script(completion(MAGISTRAL + [{"type": "text", "text": "Order 4 is cancelled."}]))
    msg = gateway(endpoint).chat_sync(USER, stage="agent", tools=TOOLS).message
    assert (msg["content"], msg["reasoning_content"]) == ("Order 4 is cancelled.", f"Weighing it. {DRAFT}")


def test_a_reasoning_part_with_a_text_field_is_not_part_of_the_answer(endpoint) -> None:
    endpoint.script(completion([{"type": "reasoning", "text": "Maybe say ###STOP###."},
                                {"type": "text", "text": "Order 4 is cancelled."}]))
    msg = gateway(endpoint).chat_sync(USER, stage="agent", tools=TOOLS).message
    assert (msg["content"], msg["reasoning_content"]) == ("Order 4 is cancelled.", "Maybe say ###STOP###.")


@pytest.mark.parametrize("token", ["<|im_end|>", "<|eot_id|>", "</s>", "<end_of_turn>", "<|end|>\n<|endoftext|>"])
def test_end_of_turn_special_tokens_left_by_the_server_are_not_part_of_the_turn(endpoint, token) -> None:
    endpoint.script(completion("Order 4 is cancelled." + token))
    msg = gateway(endpoint).chat_sync(USER, stage="agent", tools=TOOLS).message
    assert msg["content"] == "Order 4 is cancelled."


def test_a_structured_answer_followed_by_an_end_of_turn_token_is_read_without_a_repair(endpoint) -> None:
    endpoint.script(completion(GOOD + "<|im_end|>"))
    assert gateway(endpoint).structured_sync(JUDGE_STATEFUL, TASK) == StatefulJudgement(**ANSWER)
    assert len(endpoint.requests) == 1


def test_a_turn_wrapped_whole_in_answer_tags_is_its_text(endpoint) -> None:
    endpoint.script(completion("<think>Easy.</think>\n<answer>\nOrder 4 is cancelled.\n</answer>"))
    msg = gateway(endpoint).chat_sync(USER, stage="agent", tools=TOOLS).message
    assert (msg["content"], msg["reasoning_content"]) == ("Order 4 is cancelled.", "Easy.")


def test_a_llama_python_tag_tool_call_written_as_text_is_a_tool_call(endpoint) -> None:
    endpoint.script(completion('<|python_tag|>{"name": "cancel_order", "parameters": {"order_id": "4"}}<|eot_id|>'))
    msg = gateway(endpoint).chat_sync(USER, stage="agent", tools=TOOLS).message
    assert msg["content"] is None
    assert msg["tool_calls"][0]["function"] == {"name": "cancel_order", "arguments": '{"order_id": "4"}'}


def test_arguments_followed_by_a_harmony_call_token_are_read(endpoint) -> None:
    endpoint.script(completion(None, tool_calls=[{"id": "c1", "type": "function", "function": {
        "name": "cancel_order", "arguments": '{"order_id": "4"}<|call|>'}}]))
    msg = gateway(endpoint).chat_sync(USER, stage="agent", tools=TOOLS).message
    assert msg["tool_calls"][0]["function"]["arguments"] == '{"order_id": "4"}'


UPSTREAM_ERROR = {"error": {"message": "Upstream provider returned error", "code": 502}}


def test_an_http_200_carrying_an_upstream_error_is_retried_like_that_error(endpoint, store) -> None:
    endpoint.script(UPSTREAM_ERROR, completion(GOOD))
    assert gateway(endpoint, store).structured_sync(JUDGE_STATEFUL, TASK) == StatefulJudgement(**ANSWER)
    [row] = call_rows(store, "r1")
    assert (row["status"], row["attempts"], row["repairs"]) == ("ok", 2, 0)


def test_an_http_200_carrying_an_error_without_a_code_is_retried(endpoint) -> None:
    endpoint.script({"error": {"message": "overloaded"}}, completion("Order 4 is cancelled."))
    assert gateway(endpoint).chat_sync(USER, stage="agent").message["content"] == "Order 4 is cancelled."


def test_an_http_200_carrying_a_client_error_is_rejected_at_once_quoting_it(endpoint) -> None:
    endpoint.script({"error": {"message": "Invalid value for 'response_format': json_object is not supported", "code": 400}})
    with pytest.raises(LLMRequestRejected, match="json_object is not supported") as err:
        gateway(endpoint).structured_sync(JUDGE_STATEFUL, TASK)
    assert err.value.status_code == 400 and len(endpoint.requests) == 1


@pytest.mark.parametrize("finish", ["eos", "stop_sequence", "end_turn", None])
def test_other_words_for_a_complete_reply_are_read_as_complete(endpoint, finish) -> None:
    endpoint.script(completion(GOOD, finish=finish))
    assert gateway(endpoint).structured_sync(JUDGE_STATEFUL, TASK) == StatefulJudgement(**ANSWER)
    assert len(endpoint.requests) == 1


def test_tool_calls_with_finish_reason_stop_are_the_turns_calls(endpoint) -> None:
    endpoint.script(completion(None, finish="stop", tool_calls=[{"id": "c1", "type": "function", "function": {
        "name": "cancel_order", "arguments": '{"order_id": "4"}'}}]))
    msg = gateway(endpoint).chat_sync(USER, stage="agent", tools=TOOLS).message
    assert msg["tool_calls"][0]["function"]["name"] == "cancel_order" and len(endpoint.requests) == 1


@pytest.mark.parametrize("usage", [
    {"prompt_tokens": None, "completion_tokens": None, "total_tokens": None},
    {"total_tokens": 18},
], ids=["null-counts", "total-only"])
def test_usage_without_readable_counts_is_estimated_and_marked(endpoint, store, usage) -> None:
    endpoint.script(completion(GOOD, usage=usage))
    gateway(endpoint, store).structured_sync(JUDGE_STATEFUL, TASK)
    [row] = call_rows(store, "r1")
    assert row["prompt_tokens"] > 0 and row["completion_tokens"] > 0
    assert store.llm_usage("r1")["mine"]["estimated_tokens"] == row["prompt_tokens"] + row["completion_tokens"]


def test_usage_with_token_details_holding_nulls_is_read_as_reported(endpoint, store) -> None:
    endpoint.script(completion(GOOD, usage={"prompt_tokens": 30, "completion_tokens": 5, "total_tokens": 35,
                                            "prompt_tokens_details": {"cached_tokens": None},
                                            "completion_tokens_details": {"reasoning_tokens": None}}))
    gateway(endpoint, store).structured_sync(JUDGE_STATEFUL, TASK)
    [row] = call_rows(store, "r1")
    assert (row["prompt_tokens"], row["completion_tokens"]) == (30, 5)
    assert store.llm_usage("r1")["mine"]["estimated_tokens"] == 0


TAB_SKELETON = "```python\nclass Env:\n\tdef __init__(self):\n\t\tself.items = {}\n```"
SPACE_METHOD = 'def get(self, k: str) -> dict:\n    """Get."""\n    return {"success": k in self.items}\n'


def test_a_tab_indented_class_assembles_with_methods_indented_with_spaces() -> None:
    from envscaler_core.synth.assembly import assemble_module, parse_method, strip_fences
    module = assemble_module(strip_fences(TAB_SKELETON), "Env", [parse_method(SPACE_METHOD, "get")])
    assert "\t" not in module and "    def get(self, k: str) -> dict:" in module


def test_code_indented_with_tabs_alone_comes_back_indented_with_spaces() -> None:
    from envscaler_core.llm.replies import extract_code
    assert extract_code("def f():\n\tif True:\n\t\treturn 1\n") == "def f():\n    if True:\n        return 1"


def test_tabs_for_indentation_and_spaces_for_alignment_keep_the_alignment() -> None:
    from envscaler_core.llm.replies import extract_code
    source = "def f(a,\n      b):\n\tx = g(a,\n\t      b)\n\treturn x\n"
    assert extract_code(source) == "def f(a,\n      b):\n    x = g(a,\n          b)\n    return x"


def test_code_that_does_not_parse_keeps_its_tabs_for_the_stages_own_error() -> None:
    from envscaler_core.llm.replies import extract_code
    assert extract_code("def f():\n\tif True:\n        return 1\n") == "def f():\n\tif True:\n        return 1"


def test_a_chat_turn_whose_arguments_nest_thousands_deep_is_a_turn_not_a_crash(endpoint) -> None:
    raw = '{"order_id": ' + "[" * 3000 + "]" * 3000 + "}"
    endpoint.script(completion(None, tool_calls=[{"id": "c1", "type": "function",
                                                  "function": {"name": "cancel_order", "arguments": raw}}]))
    msg = gateway(endpoint).chat_sync(USER, stage="agent", tools=TOOLS).message
    assert msg["tool_calls"][0]["function"]["arguments"] == raw  # the env then reports it, as for any unreadable one


def test_a_body_nested_thousands_deep_is_one_clear_error(endpoint) -> None:
    from envscaler_core.llm.errors import LLMNoAnswer

    from tests.llm.scripted_endpoint import RAW

    text = json.dumps(completion(None, tool_calls=[{"id": "c1", "type": "function", "function": {
        "name": "cancel_order", "arguments": "ARGS"}}]))
    body = {RAW: text.replace('"ARGS"', '{"order_id": ' + "[" * 3000 + "]" * 3000 + "}")}
    endpoint.script(body)
    with pytest.raises(LLMNoAnswer, match="too deeply"):  # an unusable answer: that item fails, the run goes on
        gateway(endpoint).chat_sync(USER, stage="agent", tools=TOOLS)


def test_a_lone_surrogate_in_a_reply_text_becomes_the_replacement_character(endpoint, tmp_path) -> None:
    """Half of a surrogate pair is legal JSON text but no store accepts it: the turn must still be stored."""
    from tests.llm.scripted_endpoint import RAW

    text = json.dumps(completion("Order 4 is XX cancelled.")).replace("XX", "\\ud800")
    endpoint.script({RAW: text})
    with Store.from_url(f"duckdb:///{tmp_path / 's.duckdb'}") as store:
        msg = gateway(endpoint, store).chat_sync(USER, stage="agent", tools=TOOLS).message
        assert msg["content"] == "Order 4 is \ufffd cancelled."
        assert call_rows(store, "r1")[0]["status"] == "ok"
