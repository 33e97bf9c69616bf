"""Tokens, cost and budget: per-call rows with the right arithmetic, and a run budget that stops calls."""

from __future__ import annotations

import logging

import pytest

from envscaler_core.config import BudgetSettings, Price
from envscaler_core.llm import BudgetExceeded, LLMGateway
from envscaler_core.prompts.mine import JUDGE_STATEFUL, TaskInput
from envscaler_core.store import Store
from tests.fixtures.llm import mock_llm_settings
from tests.llm.helpers import call_rows



@pytest.fixture
def store(tmp_path):
    with Store.from_url(f"duckdb:///{tmp_path / 'usage.duckdb'}") as s:
        yield s


def test_each_call_row_carries_tokens_and_cost_from_the_configured_price(mock, store) -> None:
    settings = mock_llm_settings(mock.base_url, prices={"judge-x": Price(input_per_mtok=3.0, output_per_mtok=15.0)})
    gw = LLMGateway(settings, store=store, run_id="r1")
    gw.structured_sync(JUDGE_STATEFUL, TaskInput(task="cancel order 1"), model="judge-x")
    gw.structured_sync(JUDGE_STATEFUL, TaskInput(task="cancel order 2"), model="judge-x")
    rows = call_rows(store, "r1")
    assert [r["status"] for r in rows] == ["ok", "ok"]
    for r in rows:
        assert r["prompt_tokens"] > 0 and r["completion_tokens"] > 0 and r["model"] == "judge-x"
        assert r["cost_usd"] == pytest.approx((r["prompt_tokens"] * 3.0 + r["completion_tokens"] * 15.0) / 1e6)
    mine = gw.usage_by_stage()["mine"]
    assert mine["prompt_tokens"] == sum(r["prompt_tokens"] for r in rows)
    assert mine["cost_usd"] == pytest.approx(sum(r["cost_usd"] for r in rows))
    assert store.llm_usage("r1")["mine"]["cost_usd"] == pytest.approx(mine["cost_usd"])


def test_an_unpriced_model_costs_zero_and_is_warned_about_once(mock, caplog) -> None:
    gw = LLMGateway(mock_llm_settings(mock.base_url))
    with caplog.at_level(logging.WARNING, logger="envscaler_core.llm.accounting"):
        gw.chat_sync([{"role": "user", "content": "a"}], model="mystery-model")
        gw.chat_sync([{"role": "user", "content": "b"}], model="mystery-model")
    assert gw.usage_by_stage()["agent"]["cost_usd"] == 0.0
    assert gw.usage_by_stage()["agent"]["prompt_tokens"] > 0
    assert [r.getMessage() for r in caplog.records].count(caplog.records[0].getMessage()) == 1
    assert "mystery-model" in caplog.records[0].getMessage()


def test_the_budget_stops_the_next_call_before_any_http(mock) -> None:
    gw = LLMGateway(mock_llm_settings(mock.base_url), budget=BudgetSettings(max_tokens=1))
    gw.chat_sync([{"role": "user", "content": "first"}])
    with pytest.raises(BudgetExceeded, match="budget.max_tokens=1"):
        gw.chat_sync([{"role": "user", "content": "second"}])
    assert mock.stats()["requests_total"] == 1


def test_a_resumed_run_starts_with_what_it_already_spent(mock, store) -> None:
    settings = mock_llm_settings(mock.base_url)
    budget = BudgetSettings(max_cost_usd=1e-9)
    LLMGateway(settings, store=store, run_id="r1", budget=budget).chat_sync([{"role": "user", "content": "x"}])
    resumed = LLMGateway(settings, store=store, run_id="r1", budget=budget)
    with pytest.raises(BudgetExceeded, match="budget.max_cost_usd"):
        resumed.chat_sync([{"role": "user", "content": "y"}])
    assert mock.stats()["requests_total"] == 1
