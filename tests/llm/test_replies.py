"""Spec: `envscaler_core.llm.replies`, the one place a model's reply becomes what a stage asked for.
Forms each have one reading and are accepted; ambiguous or broken replies are refused with a reason
that says where, what was expected and what was found."""

from __future__ import annotations

import json
import tracemalloc

import pytest

from envscaler_core.llm.replies import (
    ReplyProblem, defines, extract_code, normalise_assistant, parse_answer, parse_arguments, split_reasoning,
)
from envscaler_core.prompts.scen import SolutionOutput
from envscaler_core.prompts.validate import JudgeOutput, ProposedCall
from envscaler_core.prompts.mine import StatefulJudgement
from envscaler_core.wire_values import MAX_LENIENT_CHARS, MAX_MESSAGE_VALUES

GOOD = '{"analysis": "a", "stateful": true}'


def parse(content, reasoning=None, model=StatefulJudgement):
    return parse_answer(split_reasoning(content, reasoning), model)


def problem(content, model=StatefulJudgement) -> str:
    with pytest.raises(ReplyProblem) as err:
        parse(content, model=model)
    return str(err.value)


@pytest.mark.parametrize("content", [
    GOOD, f"```json\n{GOOD}\n```", f"```\n{GOOD}\n```", f"~~~json\n{GOOD}\n~~~", f"Here you go: {GOOD} Done.",
    f"\ufeff{GOOD}", GOOD.replace(", ", ",\r\n"), f"<think>Is it {{stateful}}? ```json\n{{}}\n```</think>{GOOD}",
    f"<THINKING>x</THINKING>\n{GOOD}", f"<think>a</think><think>b</think>{GOOD}", f"<think>\nmaybe {{}}\n{GOOD}",
    f"[{GOOD}]", '{"analysis": "a", "stateful": "yes"}', '{"analysis": "a", "stateful": true /* sure */}',
    "{'analysis': 'a', 'stateful': True,}", '{"analysis": "line one\nline two", "stateful": true}',
], ids=["bare", "json-fence", "untagged-fence", "tilde-fence", "prose", "bom", "crlf", "think-with-braces",
        "thinking-tag", "two-thinks", "unclosed-think", "one-element-list", "yes", "block-comment",
        "python-trailing-comma", "raw-newline-in-string"])
def test_forms_with_one_reading_are_accepted(content) -> None:
    assert parse(content).stateful is True


def test_a_fence_inside_a_json_string_does_not_end_the_fenced_block() -> None:
    code = '{"analysis": "a", "code": "```python\\ndef check_func(s):\\n    return True\\n```"}'
    from envscaler_core.prompts.scen import CheckFunctionOutput
    out = parse(f"```json\n{code}\n```\nThat is all.", model=CheckFunctionOutput)
    assert extract_code(out.code, defines("check_func")) == "def check_func(s):\n    return True"


def test_an_unclosed_think_takes_the_last_object_not_the_draft() -> None:
    draft = '{"analysis": "draft", "stateful": false}'
    assert parse(f"<think>first {draft} then\n{GOOD}").analysis == "a"


def test_reasoning_that_never_closed_without_an_answer_asks_to_close_it() -> None:
    assert "never closed" in problem("<think>I am still thinking about {it}")


def test_a_missing_field_is_named() -> None:
    assert problem('{"analysis": "a"}') == ("object 1 (line 1) does not fit the schema: required field "
                                            "`stateful` is missing")


def test_a_wrong_value_names_field_expectation_and_what_was_found() -> None:
    text = problem('{"analysis": "a", "stateful": "perhaps"}')
    assert "`stateful`" in text and "valid boolean" in text and "a string 'perhaps'" in text


def test_nested_locations_are_named_with_indexes() -> None:
    text = problem('{"analysis": "a", "calls": [{"tool": "x", "args": {}}, {"args": {}}]}', model=SolutionOutput)
    assert "`calls[1].tool` is missing" in text


def test_broken_json_says_where() -> None:
    text = problem('```json\n{"analysis": "a" "stateful": true}\n```')
    assert "fenced block 1 (json) is not valid JSON" in text and "line 1 column" in text


def test_an_object_that_never_closes_is_called_incomplete() -> None:
    assert "never closes" in problem('Sure: {"analysis": "a", "stateful": tr')


def test_prose_without_json_is_quoted() -> None:
    assert problem("I think it is stateful.") == "no JSON object found in the reply (it reads: 'I think it is stateful.')"


def test_an_empty_reply_says_so() -> None:
    assert "content is empty" in problem("")


def test_two_different_fitting_objects_are_ambiguous() -> None:
    other = '{"analysis": "b", "stateful": false}'
    assert "2 different JSON objects" in problem(f"{GOOD}\nor\n{other}")


def test_the_same_object_twice_is_not_ambiguous() -> None:
    assert parse(f"{GOOD}\n```json\n{GOOD}\n```").stateful is True


def test_a_fenced_answer_wins_over_an_object_in_the_prose() -> None:
    other = '{"analysis": "b", "stateful": false}'
    assert parse(f"Not {other}, rather:\n```json\n{GOOD}\n```").analysis == "a"


@pytest.mark.parametrize("raw", [None, "", "  ", "null", {}, "{}"])
def test_no_arguments_in_any_spelling_is_an_empty_object(raw) -> None:
    assert parse_arguments(raw) == {}


@pytest.mark.parametrize("raw", ['{"a": 1}', '  {\n  "a": 1\n}\n', {"a": 1}, '"{\\"a\\": 1}"', "{'a': 1}",
                                 '{"a": 1,}'])
def test_arguments_in_any_readable_spelling_are_the_same_object(raw) -> None:
    assert parse_arguments(raw) == {"a": 1}


@pytest.mark.parametrize(("raw", "expected"), [('{"a": ', "not valid JSON"), ("[1, 2]", "found a list"),
                                               (42, "found an integer")])
def test_unreadable_arguments_are_refused_precisely(raw, expected) -> None:
    with pytest.raises(ReplyProblem, match=expected):
        parse_arguments(raw)


@pytest.mark.parametrize("raw", ['{"x": [' + ",".join(["[]"] * MAX_MESSAGE_VALUES) + "]}",
                                 '{"x": [' + ",".join(["{}"] * MAX_MESSAGE_VALUES) + "]}"])
def test_arguments_holding_more_values_than_the_host_parses_are_refused_before_parsing(raw) -> None:
    """Red team 8, F2: 4 MB of `[],[],...` cost the host seconds and hundreds of MB to parse; the values are
    counted on the text first, as serve-mcp counts a message, and the refusal is one line naming the limit."""
    with pytest.raises(ReplyProblem) as refused:
        parse_arguments(raw)
    assert str(refused.value) == (f"arguments hold {MAX_MESSAGE_VALUES + 2:,} JSON values, over the "
                                  f"{MAX_MESSAGE_VALUES:,} the host parses (envscaler_core.wire_values.MAX_MESSAGE_VALUES)")


# A `"` inside single-quoted strings hid everything between two of them from the JSON count (red team 9, F1).
HIDDEN_LISTS = "{'k': '\"', 'v': [" + ",".join(["[]"] * MAX_MESSAGE_VALUES) + "], 'z': '\"'}"
OFFERED = [{"type": "function", "function": {"name": "get_book", "parameters": {
    "type": "object", "properties": {"book_id": {"type": "string"}, "v": {"type": "array"}}}}}]


def test_python_literal_arguments_hiding_values_between_quotes_are_refused_unread() -> None:
    with pytest.raises(ReplyProblem) as refused:
        parse_arguments(HIDDEN_LISTS)
    assert "not read leniently" in str(refused.value) and "MAX_LENIENT_CHARS" in str(refused.value)


def test_python_literal_arguments_with_quotes_inside_still_read() -> None:
    assert parse_arguments("{'book_id': 'B\"1', 'v': [[], [1, 2]]}") == {"book_id": 'B"1', "v": [[], [1, 2]]}


def test_a_reply_text_over_the_literal_bound_is_read_as_text_not_as_calls() -> None:
    content = "<tool_call>{'name': 'get_book', 'arguments': " + HIDDEN_LISTS + "}</tool_call>"
    out = normalise_assistant({"role": "assistant", "content": content}, OFFERED)
    assert not out.get("tool_calls") and out["content"] == content


# One 4 MB value in text read leniently cost the host +474 MB: the string scanner kept a backtracking frame
# per character (red team 10, F4); the longest value a lenient reading takes now is ~64 KiB (below), and it
# must still cost about its own size. Measured as the allocations' peak, not as time.
@pytest.mark.parametrize("text", ['{"title": "%s",}', '{"title": "%s"} // note', "{'title': '%s'}"],
                         ids=["trailing comma", "comment", "single quotes"])
def test_one_long_value_read_leniently_costs_about_its_own_size(text: str) -> None:
    value = "a" * (MAX_LENIENT_CHARS - 100)
    tracemalloc.start()
    try:
        assert parse_arguments(text % value) == {"title": value}
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 10 * len(value), f"{peak >> 20} MiB to read {len(value) >> 20} MiB"


# rt14-B F3: text with no comma or bracket passed the literal bound, and the lenient readings walk it in
# Python: 4 MB of these cost 3-7 s of host CPU per step, sent again at every step.
_BIG = 4_000_000
UNBOUNDED_SHAPES = {
    "implicit string joining": "{'a': " + "'x' " * (_BIG // 4) + "}",
    "a run of quotes": "{'a': 1, " + "'" * _BIG + "}",
    "a run of minus signs": "{'a': " + "-" * _BIG + "1}",
    "fence openers": "```json\n" * (_BIG // 8),
    "a trailing comma": '{"title": "%s",}' % ("a" * _BIG),
}


@pytest.mark.parametrize("shape", sorted(UNBOUNDED_SHAPES))
def test_text_longer_than_the_lenient_bound_must_be_strict_json(shape: str) -> None:
    with pytest.raises(ReplyProblem) as refused:
        parse_arguments(UNBOUNDED_SHAPES[shape])
    assert "not read leniently" in str(refused.value) and f"over the {MAX_LENIENT_CHARS:,}" in str(refused.value)


def test_strict_json_is_read_at_any_length() -> None:
    value = "a" * _BIG
    assert parse_arguments('{"title": "%s"}' % value) == {"title": value}


def deep(levels: int) -> str:
    return '{"folder": ' + "[" * levels + "]" * levels + "}"


@pytest.mark.parametrize("levels", [100, 999, 3000, 100_000])
def test_arguments_nested_past_any_tools_parameters_are_refused_not_a_crash(levels) -> None:
    with pytest.raises(ReplyProblem, match="nest"):
        parse_arguments(deep(levels))
    with pytest.raises(ReplyProblem, match="nest"):
        parse_arguments(json.loads(deep(min(levels, 900))))  # arguments sent as an object


def test_a_turn_with_too_deep_arguments_keeps_them_as_written_so_the_env_reports_them() -> None:
    raw = deep(3000)
    msg = normalise_assistant({"content": None, "tool_calls": [{"id": "c", "function": {"name": "cd", "arguments": raw}}]})
    assert msg["tool_calls"][0]["function"]["arguments"] == raw


def test_unreadable_arguments_are_kept_as_written_so_the_env_reports_them() -> None:
    msg = normalise_assistant({"content": None, "tool_calls": [{"id": "c", "function": {"name": "x", "arguments": "{oops"}}]})
    assert msg["tool_calls"][0]["function"]["arguments"] == "{oops"


def test_the_legacy_function_call_field_becomes_a_tool_call() -> None:
    msg = normalise_assistant({"content": None, "function_call": {"name": "x", "arguments": '{"a": 1}'}}, turn=2)
    assert msg["tool_calls"] == [{"id": "call_2_0", "type": "function", "function": {"name": "x", "arguments": '{"a": 1}'}}]


def test_tool_call_text_for_a_tool_that_was_not_offered_stays_text() -> None:
    text = '<tool_call>{"name": "rm_rf", "arguments": {}}</tool_call>'
    msg = normalise_assistant({"content": text}, tools=[{"type": "function", "function": {"name": "x"}}])
    assert "tool_calls" not in msg and msg["content"] == text


def test_a_refusal_without_content_becomes_the_turns_text() -> None:
    assert normalise_assistant({"content": None, "refusal": "No."})["content"] == "No."


@pytest.mark.parametrize("text", [
    "```python\ndef check_func(s):\n    return True\n```",
    "Here is the function:\n\n```py\ndef check_func(s):\n    return True\n```\nIt returns a bool.",
    "Usage:\n```python\ncheck_func({})\n```\nThe function:\n```python\ndef check_func(s):\n    return True\n```",
    "Here is the function:\ndef check_func(s):\n    return True\nThis works.",
    "    def check_func(s):\n        return True\n",
    "<think>```python\ndef check_func(s): return False\n```</think>\ndef check_func(s):\n    return True",
    "\ufeffdef check_func(s):\r\n    return True\r\n",
], ids=["fence", "prose", "example-first", "no-fence-prose", "indented", "think", "crlf-bom"])
def test_code_is_found_in_every_common_wrapping(text) -> None:
    assert extract_code(text, defines("check_func")) == "def check_func(s):\n    return True"


def test_code_that_does_not_parse_is_returned_for_the_stage_to_report() -> None:
    assert extract_code("```python\ndef check_func(s)\n    return True\n```") == "def check_func(s)\n    return True"


def test_verdicts_and_case_types_ignore_case_and_emphasis() -> None:
    assert JudgeOutput.model_validate({"analysis": "", "verdict": "**PASS**", "reason": ""}).verdict == "pass"
    call = ProposedCall.model_validate({"thought": "", "tool": "t", "args": '{"x": 1}', "case_type": "'Negative'"})
    assert (call.args, call.case_type) == ({"x": 1}, "negative")


OFFERED = [{"type": "function", "function": {"name": "get"}}]


@pytest.mark.parametrize("content", [
    '[TOOL_CALLS][{"name": "get", "arguments": {"id": 1}}]',
    '{"name": "get", "parameters": {"id": 1}}',
    '```json\n[{"name": "get", "arguments": {"id": 1}}]\n```',
    '<|channel|>analysis<|message|>need {id}<|end|><|start|>assistant<|channel|>commentary to=functions.get '
    '<|constrain|>json<|message|>{"id": 1}<|call|>',
], ids=["mistral", "llama", "fenced-list", "harmony"])
def test_tool_calls_written_as_text_by_other_model_families_are_read(content) -> None:
    msg = normalise_assistant({"content": content}, OFFERED)
    assert [(c["function"]["name"], c["function"]["arguments"]) for c in msg["tool_calls"]] == [("get", '{"id": 1}')]


def test_json_naming_a_tool_that_was_not_offered_is_just_text() -> None:
    assert "tool_calls" not in normalise_assistant({"content": '{"name": "rm", "parameters": {}}'}, OFFERED)


def test_harmony_final_channel_is_the_answer_and_analysis_is_reasoning() -> None:
    draft = '{"analysis": "draft", "stateful": false}'
    text = (f"<|channel|>analysis<|message|>maybe {draft}<|end|><|start|>assistant<|channel|>final<|message|>"
            f"{GOOD}<|return|>")
    assert parse(text).analysis == "a"


@pytest.mark.parametrize("content", ["{analysis: 'a', stateful: true}", "{'analysis': 'a', 'stateful': true, // ok\n}",
                                     "{\"analysis\": \"a\", 'stateful': True}"])
def test_json5_like_spellings_are_read(content) -> None:
    assert parse(content).stateful is True


def test_reasoning_details_lists_are_set_aside() -> None:
    msg = normalise_assistant({"content": "hi", "reasoning_details": [{"type": "reasoning.text", "text": "deep"}]})
    assert (msg["content"], msg["reasoning_content"]) == ("hi", "deep")


@pytest.mark.parametrize(("stateful", "score"), [("Yes.", "8/10"), ("**true**", "8 out of 10"), ("YES", " 8 ")])
def test_judgements_and_scores_in_the_spellings_models_use(stateful, score) -> None:
    from envscaler_core.prompts.mine import TopicInference

    assert parse(f'{{"analysis": "a", "stateful": "{stateful}"}}').stateful is True
    topic = TopicInference.model_validate({"analysis": "a", "summary": "s", "introduction": "i",
                                           "usefulness": score, "modelability": 7})
    assert topic.usefulness == 8


def test_a_score_out_of_another_scale_is_refused() -> None:
    from pydantic import ValidationError

    from envscaler_core.prompts.mine import TopicInference

    with pytest.raises(ValidationError):
        TopicInference.model_validate({"analysis": "a", "summary": "s", "introduction": "i", "usefulness": "4/5",
                                       "modelability": 7})


@pytest.mark.parametrize(("raw", "needle"), [('{"a": ' + "9" * 5001 + "}", "4300 digits"),
                                             ('{"a": "\\ud800"}', "lone surrogate")],
                         ids=["huge-integer", "lone-surrogate"])
def test_arguments_no_later_step_could_carry_are_refused_precisely(raw, needle) -> None:
    with pytest.raises(ReplyProblem, match=needle):
        parse_arguments(raw)


def test_a_think_block_inside_a_tool_call_block_is_reasoning_and_the_call_survives() -> None:
    """`<tool_call><think>…</think>{…}</tool_call>`: everything before `</think>` used to be taken for a
    template-opened reasoning block, which swallowed the call's opening tag (outside re-check, 2026-11-26)."""
    from envscaler_core.llm.replies import normalise_assistant

    tools = [{"type": "function", "function": {"name": "get_policy", "parameters": {
        "type": "object", "properties": {"policy_id": {"type": "string"}}}}}]
    content = '<tool_call>\n<think>I should look it up.</think>\n{"name": "get_policy", "arguments": {"policy_id": "P1"}}\n</tool_call>'
    turn = normalise_assistant({"role": "assistant", "content": content}, tools)
    assert [c["function"] for c in turn["tool_calls"]] == [{"name": "get_policy", "arguments": '{"policy_id": "P1"}'}]
    assert turn["reasoning_content"] == "I should look it up."


def _scan_from(text: str, start: int) -> int | None:
    """The reference: one scan per start (the quadratic way `Brackets` replaced), depth counted."""
    from envscaler_core.llm.replies.json_text import _SPECIAL, _string_end

    depth, i = 0, start
    while (found := _SPECIAL.search(text, i)) is not None:
        i = found.start()
        if text[i] in "\"'":
            i = max(_string_end(text, i), i + 1)
            continue
        depth += 1 if text[i] in "{[" else -1
        if depth == 0:
            return i + 1
        i += 1
    return None


def test_brackets_finds_what_a_scan_from_each_start_finds() -> None:
    """`Brackets` (one walk settling many starts) against a scan per start on random texts of brackets,
    quotes, apostrophes, backslashes and newlines: the same end for every start."""
    import random

    from envscaler_core.llm.replies.json_text import Brackets

    rng = random.Random(7)
    for _ in range(400):
        text = "".join(rng.choice('{}[]"\'\\\n ab:,') for _ in range(rng.randint(0, 40)))
        brackets = Brackets(text)
        starts = [i for i, ch in enumerate(text) if ch in "{["]
        for start in rng.sample(starts, len(starts)):  # any order of questions
            assert brackets.end(start) == _scan_from(text, start), (text, start)


def test_fences_are_the_blocks_a_lazy_fence_regex_finds() -> None:
    """`fences` (closing lines found once, then looked up) against the regex it replaced, on random texts
    of backtick and tilde runs, languages, blank space and newlines: the same blocks, in order."""
    import random
    import re

    from envscaler_core.llm.replies.json_text import fences

    reference = re.compile(r"(?P<fence>`{3,}|~{3,})[ \t]*(?P<lang>[^\n`]*)\n(?P<body>.*?)\n[ \t]*(?P=fence)[ \t]*(?=\n|$)",
                           re.DOTALL)
    rng = random.Random(11)
    pieces = ["```", "````", "~~~", "~~~~", "`", "~", "json", "py", " ", "\t", "\n", "\n", "x", "{}"]
    for _ in range(3000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 16)))
        want = [(m.group("lang").strip().lower(), m.group("body"), m.start(), m.end()) for m in reference.finditer(text)]
        assert [(f.lang, f.body, f.start, f.end) for f in fences(text)] == want, repr(text)
