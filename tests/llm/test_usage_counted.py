"""Spec: what the provider reported a request cost is what the run counts. Usage reported on a reply the
gateway refuses (a 200 whose choice ended in "error", an error body) counts toward tokens, cost and the
budget (an outside check's run under-counted its prompt tokens by 49%); a `total_tokens` above prompt +
completion counts the difference as output (Gemini's thinking tokens); an all-zero usage on a real reply is
read as missing, estimated and marked. Scripted local endpoint, real gateway and `openai` client."""

from __future__ import annotations

import json

import pytest

from envscaler_core.config import BudgetSettings
from envscaler_core.llm import BudgetExceeded
from envscaler_core.prompts.mine import JUDGE_STATEFUL, TaskInput
from tests.llm.helpers import call_rows, scripted_gateway as gateway
from tests.llm.scripted_endpoint import completion

TASK = TaskInput(task="Cancel order 4.")
GOOD = json.dumps({"analysis": "It changes an order.", "stateful": True})
USER = [{"role": "user", "content": "cancel order 4"}]




def _error_choice(usage: dict[str, int]) -> dict:
    body = completion("{\"analysis\": \"It ch", usage=usage)
    body["choices"][0]["finish_reason"] = "error"
    body["choices"][0]["error"] = {"code": 502, "message": "Upstream error from Together: connection reset"}
    return body


def test_usage_reported_with_a_finish_reason_error_reply_is_counted(endpoint, store) -> None:
    """Before: the choice's error was raised before its usage was read: 49% of an outside check's prompt
    tokens were missing from the run's accounting and its budget."""
    endpoint.script(_error_choice({"prompt_tokens": 100, "completion_tokens": 7, "total_tokens": 107}), completion(GOOD))
    gw = gateway(endpoint, store)
    assert gw.structured_sync(JUDGE_STATEFUL, TASK).stateful is True
    [row] = call_rows(store, "r1")
    assert (row["attempts"], row["prompt_tokens"], row["completion_tokens"]) == (2, 111, 14)
    mine = gw.usage_by_stage()["mine"]
    assert (mine["prompt_tokens"], mine["completion_tokens"], mine["estimated_tokens"]) == (111, 14, 0)


def test_usage_beside_an_error_body_counts_toward_the_budget(endpoint) -> None:
    billed = {"error": {"message": "Upstream provider returned error", "code": 502},
              "usage": {"prompt_tokens": 600, "completion_tokens": 0, "total_tokens": 600}}
    endpoint.script(billed, completion(GOOD))
    gw = gateway(endpoint, budget=BudgetSettings(max_tokens=500))
    # the billed refusal alone reaches the cap: the call's retry, checked right before it is sent, is not
    with pytest.raises(BudgetExceeded, match="600 >= budget.max_tokens=500"):
        gw.structured_sync(JUDGE_STATEFUL, TASK)


def recorded(endpoint, store, usage: dict) -> tuple[dict, int]:
    """One structured call answered with `usage`: its audit row and the stage's estimated tokens."""
    endpoint.script(completion(GOOD, usage=usage))
    gw = gateway(endpoint, store)
    gw.structured_sync(JUDGE_STATEFUL, TASK)
    [row] = call_rows(store, "r1")
    return row, gw.usage_by_stage()["mine"]["estimated_tokens"]


def test_total_tokens_above_prompt_and_completion_count_as_output(endpoint, store) -> None:
    """Gemini's OpenAI layer leaves its thinking tokens out of completion_tokens but bills them (they are
    in total_tokens). Before: never counted."""
    row, estimated = recorded(endpoint, store, {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 318})
    assert (row["prompt_tokens"], row["completion_tokens"]) == (11, 307)
    assert estimated == 0


def test_all_zero_usage_on_a_real_reply_is_estimated_and_marked(endpoint, store) -> None:
    """Before: recorded as 0 tokens and $0, so no budget could ever trigger."""
    endpoint.script(completion(GOOD, usage={"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}))
    gw = gateway(endpoint, store)
    reply = gw.chat_sync(USER, stage="agent")
    [row] = call_rows(store, "r1")
    assert row["prompt_tokens"] > 0 and row["completion_tokens"] > 0
    assert reply.usage_estimated and gw.usage_by_stage()["agent"]["estimated_tokens"] == (
        row["prompt_tokens"] + row["completion_tokens"])


def test_a_prompt_count_left_at_zero_beside_a_total_is_the_rest_of_the_total(endpoint, store) -> None:
    """{"prompt_tokens": 0, "completion_tokens": C, "total_tokens": P + C}: the prompt was estimated and the
    whole prompt booked again as output through the total (3.3x the cost; a second outside check)."""
    row, estimated = recorded(endpoint, store, {"prompt_tokens": 0, "completion_tokens": 7, "total_tokens": 318})
    assert (row["prompt_tokens"], row["completion_tokens"]) == (311, 7)
    assert estimated == 0


def test_anthropic_cache_fields_beside_an_uncached_prompt_count_are_prompt_tokens(endpoint, store) -> None:
    """A relay passing Anthropic's fields beside OpenAI's names: `prompt_tokens` held only the uncached
    part, and the cache reads were booked as output through `total_tokens`."""
    usage = {"prompt_tokens": 40, "input_tokens": 40, "cache_read_input_tokens": 1000, "completion_tokens": 7,
             "output_tokens": 7, "total_tokens": 1047}
    row, _ = recorded(endpoint, store, usage)
    assert (row["prompt_tokens"], row["completion_tokens"]) == (1040, 7)
