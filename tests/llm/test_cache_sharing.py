"""Which stored answer the cache serves: a run with `llm.cache` off feeds no other run, and what a
cache-on run is served never changes because a later run paid again for the same request.

Real gateway, the mock LLM over HTTP (the tiny handler of tests/llm/conftest.py for chat turns, the real
brain for the structured one), a real DuckDB file. The outside check that found it: run A (cache
on, healthy endpoint), run B (cache off, 30% malformed replies), run C (cache on, healthy again) was
served B's broken answers and lost 8 of 15 trajectories.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlalchemy import text

from envscaler_core.llm import LLMGateway
from envscaler_core.prompts.mine import JUDGE_STATEFUL, TaskInput
from envscaler_core.store import Store
from mock_llm.server import MockServer
from tests.fixtures.llm import mock_llm_settings

QUESTIONS = ["Book a table for two.", "Cancel order 17.", "Rename my playlist to Road Trip."]


def _ask(mock: MockServer, url: str, run_id: str, *, cache: bool = True, own_answers_only: bool = False) -> list[str]:
    """One run: each question as a chat turn; the answers' texts."""
    settings = mock_llm_settings(mock.base_url, cache=cache)
    with Store.from_url(url) as store:
        gw = LLMGateway(settings, store=store, run_id=run_id, own_answers_only=own_answers_only)
        return [str(gw.chat_sync([{"role": "user", "content": q}]).message.get("content")) for q in QUESTIONS]


def _requests(mock: MockServer) -> int:
    return int(mock.stats()["requests_total"])


def _statuses(url: str, run_id: str) -> list[str]:
    with Store.from_url(url) as store, store.engine.connect() as conn:
        return list(conn.execute(text("SELECT status FROM llm_calls WHERE run_id = :r ORDER BY created_at, call_id"),
                                 {"r": run_id}).scalars())


def _three_runs(mock: MockServer, tmp_path: Path) -> tuple[str, list[str], list[str]]:
    """A healthy and cached, then B with the cache off against a faulty endpoint; the store's url."""
    url = f"duckdb:///{tmp_path / 'c.duckdb'}"
    a = _ask(mock, url, "A")
    mock.set_faults(p_malformed=1.0)
    b = _ask(mock, url, "B", cache=False)
    mock.set_faults(p_malformed=0.0)
    return url, a, b


def test_a_run_with_the_cache_off_never_changes_what_later_runs_are_served(mock, tmp_path) -> None:
    url, a, b = _three_runs(mock, tmp_path)
    assert all(x != y for x, y in zip(a, b))  # B was answered otherwise (cut-off replies)
    before = _requests(mock)
    c = _ask(mock, url, "C")
    assert c == a
    assert _requests(mock) == before  # every answer from the cache
    assert _statuses(url, "C") == ["cached"] * len(QUESTIONS)


def test_a_run_with_the_cache_off_still_records_its_answers(mock, tmp_path) -> None:
    url, _, _ = _three_runs(mock, tmp_path)
    assert _statuses(url, "B") == ["ok"] * len(QUESTIONS)


def test_a_run_with_the_cache_off_resumed_with_it_off_pays_again(mock, tmp_path) -> None:
    url, _, _ = _three_runs(mock, tmp_path)
    before = _requests(mock)
    _ask(mock, url, "B", cache=False)
    assert _requests(mock) == before + len(QUESTIONS)


def test_a_run_with_the_cache_off_resumed_with_it_on_is_served_its_own_answers(mock, tmp_path) -> None:
    url, _, b = _three_runs(mock, tmp_path)
    before = _requests(mock)
    assert _ask(mock, url, "B") == b
    assert _requests(mock) == before


def test_a_later_run_paying_again_does_not_change_the_served_answer(mock, tmp_path) -> None:
    """An evaluation on its own answers pays again with the cache on; the first answer recorded stays the one
    other runs are served."""
    url = f"duckdb:///{tmp_path / 'c.duckdb'}"
    a = _ask(mock, url, "A")
    mock.set_faults(p_malformed=1.0)
    e = _ask(mock, url, "eval", own_answers_only=True)
    mock.set_faults(p_malformed=0.0)
    assert e != a and _statuses(url, "eval") == ["ok"] * len(QUESTIONS)
    assert _ask(mock, url, "C") == a


def test_an_evaluation_resumed_is_served_its_own_answers_not_the_first_recorded(mock, tmp_path) -> None:
    url = f"duckdb:///{tmp_path / 'c.duckdb'}"
    _ask(mock, url, "A")
    mock.set_faults(p_malformed=1.0)
    e = _ask(mock, url, "eval", own_answers_only=True)
    mock.set_faults(p_malformed=0.0)
    before = _requests(mock)
    assert _ask(mock, url, "eval", own_answers_only=True) == e
    assert _requests(mock) == before


def _stale_answer(store: Store, task: TaskInput, model: str, run_id: str) -> None:
    """An `ok` row for the request whose answer the prompt's output model refuses (a foreign entry)."""
    from envscaler_core.llm.cache import request_fingerprint
    from envscaler_core.llm.structured_output import STRUCTURED_KEY
    from envscaler_core.models.llm import LLMCall

    fp = request_fingerprint("structured", model, JUDGE_STATEFUL.render(task), None, STRUCTURED_KEY,
                             JUDGE_STATEFUL.tag)
    store.record_llm_call(LLMCall(fingerprint=fp, run_id=run_id, stage="mine", model=model, status="ok",
                                  response={"message": {"role": "assistant", "content": '{"unrelated": 1}'}}))


def test_an_unusable_cached_answer_is_passed_over_for_the_next_one(mock_stats_reset, tmp_path) -> None:
    """The first answer recorded wins only if it can be used: a stale one does not make every run pay again."""
    settings = mock_llm_settings(mock_stats_reset.base_url)
    task = TaskInput(task=QUESTIONS[0])
    with Store.from_url(f"duckdb:///{tmp_path / 'c.duckdb'}") as store:
        _stale_answer(store, task, settings.models.mine, "old")
        first: Any = LLMGateway(settings, store=store, run_id="A").structured_sync(JUDGE_STATEFUL, task)
        assert _requests(mock_stats_reset) == 1  # the stale answer was not used: asked
        again: Any = LLMGateway(settings, store=store, run_id="C").structured_sync(JUDGE_STATEFUL, task)
    assert again == first
    assert _requests(mock_stats_reset) == 1
