"""Structured calls through the real brain: validated output, bounded repair, audit rows.

Uses the session mock server with the library brain and a real DuckDB store per test.
"""

from __future__ import annotations

import pytest

from envscaler_core.llm import LLMGateway, LLMOutputInvalid
from envscaler_core.prompts.mine import JUDGE_STATEFUL, StatefulJudgement, TaskInput
from envscaler_core.store import Store
from tests.fixtures.llm import mock_llm_settings
from tests.llm.helpers import call_rows

TASK = TaskInput(task="Cancel my order #4 and refund it to my card.")


@pytest.fixture
def store(tmp_path):
    with Store.from_url(f"duckdb:///{tmp_path / 'llm.duckdb'}") as s:
        yield s


def test_structured_returns_the_validated_output_model(mock_stats_reset) -> None:
    out = LLMGateway(mock_llm_settings(mock_stats_reset.base_url)).structured_sync(JUDGE_STATEFUL, TASK, stage="mine")
    assert isinstance(out, StatefulJudgement)
    assert mock_stats_reset.stats()["by_prompt"] == {"mine.judge_stateful": 1}


def test_a_malformed_reply_is_repaired_within_the_bound(mock_stats_reset, store) -> None:
    mock_stats_reset.set_faults(script=["malformed"])
    gw = LLMGateway(mock_llm_settings(mock_stats_reset.base_url, repair_attempts=2), store=store, run_id="r1")
    out = gw.structured_sync(JUDGE_STATEFUL, TASK)
    assert isinstance(out, StatefulJudgement)
    assert mock_stats_reset.stats()["requests_total"] == 2  # the bad reply, then the repair turn
    [row] = call_rows(store, "r1")
    assert (row["status"], row["repairs"], row["attempts"]) == ("ok", 1, 1)


def test_repair_gives_up_after_the_bound_with_a_recorded_reason(mock_stats_reset, store) -> None:
    mock_stats_reset.set_faults(script=["malformed"] * 3)
    gw = LLMGateway(mock_llm_settings(mock_stats_reset.base_url, repair_attempts=2), store=store, run_id="r1")
    with pytest.raises(LLMOutputInvalid) as err:
        gw.structured_sync(JUDGE_STATEFUL, TASK)
    assert "never closes" in err.value.reason and err.value.last_output  # the truncated object, named
    assert JUDGE_STATEFUL.tag in str(err.value) and "2 repair" in str(err.value)
    assert mock_stats_reset.stats()["requests_total"] == 3  # first try + exactly repair_attempts turns
    [row] = call_rows(store, "r1")
    assert (row["status"], row["repairs"], row["error"]) == ("output_invalid", 2, err.value.reason)
    assert row["prompt_tokens"] > 0  # the invalid turns were still paid for


def test_zero_repair_attempts_means_one_request_only(mock_stats_reset) -> None:
    mock_stats_reset.set_faults(script=["malformed"])
    gw = LLMGateway(mock_llm_settings(mock_stats_reset.base_url, repair_attempts=0))
    with pytest.raises(LLMOutputInvalid):
        gw.structured_sync(JUDGE_STATEFUL, TASK)
    assert mock_stats_reset.stats()["requests_total"] == 1
