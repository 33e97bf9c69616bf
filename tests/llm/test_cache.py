"""The response cache: identical calls are never sent twice, within a process or across runs."""

from __future__ import annotations

from envscaler_core.llm import LLMGateway
from envscaler_core.llm.cache import request_fingerprint
from envscaler_core.prompts.mine import JUDGE_STATEFUL, TaskInput
from envscaler_core.store import Store
from tests.fixtures.llm import mock_llm_settings
from tests.llm.helpers import call_rows

TASK = TaskInput(task="Move my dentist appointment from Monday to Thursday at 10am.")


def test_an_identical_call_is_served_from_memory_with_no_http(mock_stats_reset) -> None:
    gw = LLMGateway(mock_llm_settings(mock_stats_reset.base_url))
    first = gw.structured_sync(JUDGE_STATEFUL, TASK)
    before = mock_stats_reset.stats()["requests_total"]
    second = gw.structured_sync(JUDGE_STATEFUL, TASK)
    assert second == first
    assert mock_stats_reset.stats()["requests_total"] == before == 1
    assert gw.usage_by_stage()["mine"]["calls"] == 2 and gw.usage_by_stage()["mine"]["cached"] == 1


def test_a_resumed_run_reads_answers_from_the_store_with_no_http(mock_stats_reset, tmp_path) -> None:
    url = f"duckdb:///{tmp_path / 'resume.duckdb'}"
    settings = mock_llm_settings(mock_stats_reset.base_url)
    with Store.from_url(url) as store:
        first = LLMGateway(settings, store=store, run_id="run-1").structured_sync(JUDGE_STATEFUL, TASK)
    assert mock_stats_reset.stats()["requests_total"] == 1
    with Store.from_url(url) as store:  # a new process would start exactly like this
        gw = LLMGateway(settings, store=store, run_id="run-1")
        again = gw.structured_sync(JUDGE_STATEFUL, TASK)
        rows = call_rows(store, "run-1")
    assert again == first
    assert mock_stats_reset.stats()["requests_total"] == 1
    assert [(r["status"], r["attempts"], r["cost_usd"]) for r in rows][1] == ("cached", 0, 0.0)
    assert rows[0]["status"] == "ok"


def test_a_gateway_on_its_own_answers_reuses_its_run_but_never_another_run(mock_stats_reset, tmp_path) -> None:
    """An evaluation's gateway: a resume of its run is answered from the store, a new run id pays again
    (another run with the same model name may have been another model, or a transient bad answer)."""
    url = f"duckdb:///{tmp_path / 'eval.duckdb'}"
    settings = mock_llm_settings(mock_stats_reset.base_url)
    with Store.from_url(url) as store:
        LLMGateway(settings, store=store, run_id="before", own_answers_only=True).structured_sync(JUDGE_STATEFUL, TASK)
    with Store.from_url(url) as store:
        LLMGateway(settings, store=store, run_id="before", own_answers_only=True).structured_sync(JUDGE_STATEFUL, TASK)
        assert mock_stats_reset.stats()["requests_total"] == 1
        LLMGateway(settings, store=store, run_id="after", own_answers_only=True).structured_sync(JUDGE_STATEFUL, TASK)
        assert mock_stats_reset.stats()["requests_total"] == 2
        assert [r["status"] for r in call_rows(store, "after")] == ["ok"]


def test_cache_off_sends_every_call(mock_stats_reset) -> None:
    gw = LLMGateway(mock_llm_settings(mock_stats_reset.base_url, cache=False))
    gw.structured_sync(JUDGE_STATEFUL, TASK)
    gw.structured_sync(JUDGE_STATEFUL, TASK)
    assert mock_stats_reset.stats()["requests_total"] == 2


def test_a_new_prompt_version_or_sample_is_a_different_cache_key() -> None:
    messages = [{"role": "user", "content": "x"}]
    base = request_fingerprint("chat", "m", messages, None, {"sample": 0}, "agent.act@1")
    assert base == request_fingerprint("chat", "m", [dict(m) for m in messages], None, {"sample": 0}, "agent.act@1")
    assert base != request_fingerprint("chat", "m", messages, None, {"sample": 0}, "agent.act@2")
    assert base != request_fingerprint("chat", "m", messages, None, {"sample": 1}, "agent.act@1")
    assert base != request_fingerprint("chat", "m2", messages, None, {"sample": 0}, "agent.act@1")


def test_chat_samples_are_not_served_each_others_turns(mock, settings) -> None:
    gw = LLMGateway(settings)
    hello = [{"role": "user", "content": "hello"}]
    gw.chat_sync(hello, sample=0)
    assert gw.chat_sync(hello, sample=0).cached is True
    assert gw.chat_sync(hello, sample=1).cached is False
    assert mock.stats()["requests_total"] == 2


class _CountingStore(Store):
    """The real DuckDB store, counting the per-call cache queries the gateway makes."""

    lookups = 0

    def cached_responses(self, fingerprint: str, run_id: str | None = None,  # type: ignore[no-untyped-def]
                         asker: str | None = None):
        type(self).lookups += 1
        return super().cached_responses(fingerprint, run_id, asker)


def test_calls_the_store_has_no_answer_for_skip_the_cache_query(mock_stats_reset, tmp_path) -> None:
    settings = mock_llm_settings(mock_stats_reset.base_url)
    _CountingStore.lookups = 0
    with _CountingStore.from_url(f"duckdb:///{tmp_path / 'fresh.duckdb'}") as store:
        gw = LLMGateway(settings, store=store, run_id="run-1")
        for text in ("Book a table for two.", "Cancel order 17.", "Rename my playlist."):
            gw.structured_sync(JUDGE_STATEFUL, TaskInput(task=text))
        rows = call_rows(store, "run-1")
    assert _CountingStore.lookups == 0
    assert [r["status"] for r in rows] == ["ok", "ok", "ok"]


def test_answers_recorded_before_the_gateway_opened_are_still_served(mock_stats_reset, tmp_path) -> None:
    url = f"duckdb:///{tmp_path / 'resume.duckdb'}"
    settings = mock_llm_settings(mock_stats_reset.base_url)
    other = TaskInput(task="Transfer 20 dollars to Sam.")
    with Store.from_url(url) as store:
        LLMGateway(settings, store=store, run_id="run-1").structured_sync(JUDGE_STATEFUL, TASK)
    _CountingStore.lookups = 0
    with _CountingStore.from_url(url) as store:
        gw = LLMGateway(settings, store=store, run_id="run-1")
        gw.structured_sync(JUDGE_STATEFUL, other)  # a miss: no query
        gw.structured_sync(JUDGE_STATEFUL, TASK)  # in the store: one query, no HTTP
        statuses = [r["status"] for r in call_rows(store, "run-1")]
    assert _CountingStore.lookups == 1
    assert mock_stats_reset.stats()["requests_total"] == 2
    assert statuses == ["ok", "ok", "cached"]
