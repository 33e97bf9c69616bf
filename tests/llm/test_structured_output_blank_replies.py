"""Spec: a server that answers requests sent with `response_format` by an empty or aborted reply (older SGLang
aborts a grammar it cannot compile: HTTP 200, empty content, finish_reason "abort"), twice in a row, is asked
once without it; an answer then is learned as a refusal of `response_format` is (dropped for the rest of the
run, said once in the log), and no answer either leaves the item's reason naming response_format as the likely
cause. Real gateway and `openai` client against a scripted endpoint. Before, an outside check's run was emptied
that way: 176 requests, 150 retries, `response_format` never dropped, the cause never named."""

from __future__ import annotations

import json
import logging

import pytest

from envscaler_core.llm.errors import LLMOutputInvalid
from envscaler_core.prompts.mine import JUDGE_STATEFUL, StatefulJudgement, TaskInput
from tests.llm.helpers import scripted_gateway as gateway
from tests.llm.scripted_endpoint import completion

TASK = TaskInput(task="Cancel order 4.")
ANSWER = {"analysis": "It changes an order.", "stateful": True}
ABORT = completion("", finish="abort", usage={"prompt_tokens": 1200, "completion_tokens": 0, "total_tokens": 1200})
EMPTY = completion("", finish="stop")


@pytest.mark.parametrize("blank", [ABORT, EMPTY], ids=["abort", "empty"])
def test_two_blank_replies_are_asked_once_without_it_and_the_answer_teaches_the_fallback(endpoint, caplog,
                                                                                           blank) -> None:
    endpoint.script(blank, blank, completion(json.dumps(ANSWER)))
    llm = gateway(endpoint, structured_output="json_schema")
    with caplog.at_level(logging.WARNING):
        assert llm.structured_sync(JUDGE_STATEFUL, TASK) == StatefulJudgement(**ANSWER)
        llm.structured_sync(JUDGE_STATEFUL, TaskInput(task="Book a table."))
    sent = ["response_format" in r for r in endpoint.requests]
    assert sent == [True, True, False, False]  # learned: the next item is asked without it
    said = [r.getMessage() for r in caplog.records if "refused response_format" in r.getMessage()]
    assert len(said) == 1


def test_no_answer_without_it_either_names_response_format_as_the_likely_cause(endpoint) -> None:
    endpoint.script(ABORT)
    with pytest.raises(LLMOutputInvalid) as caught:
        gateway(endpoint, structured_output="json_schema", repair_attempts=1).structured_sync(JUDGE_STATEFUL, TASK)
    assert "response_format" in str(caught.value) and "likely cause" in str(caught.value)
    assert any("response_format" not in r for r in endpoint.requests)
    assert len(endpoint.requests) <= 8  # bounded: two rounds of (two with it, then without it, retried once)


def test_one_blank_reply_is_asked_again_as_it_was(endpoint) -> None:
    endpoint.script(ABORT, completion(json.dumps(ANSWER)))
    gateway(endpoint, structured_output="json_schema").structured_sync(JUDGE_STATEFUL, TASK)
    assert ["response_format" in r for r in endpoint.requests] == [True, True]
