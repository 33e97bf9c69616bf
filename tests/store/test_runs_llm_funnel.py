"""Run records, the LLM call log as cache and usage ledger, and the funnel counts."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from envscaler_core.models import (
    AcceptedEnv,
    EnvCandidate,
    EnvTopic,
    LLMCall,
    Run,
    Scenario,
    SourceTask,
    Trajectory,
)
from envscaler_core.store import Store
from tests.store.samples import every_kind, source_task

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def call(fingerprint: str = "fp1", **fields: object) -> LLMCall:
    base: dict[str, object] = {"fingerprint": fingerprint, "run_id": "r1", "stage": "mine", "model": "gpt-4.1", "status": "ok"}
    return LLMCall.model_validate({**base, **fields})


def test_a_saved_run_reads_back(store: Store) -> None:
    run = Run(run_id="r1", stage="mine", config={"mine": {"select_n": 3}}, sources=["a.jsonl"])
    store.save_run(run)
    assert store.get_run("r1") == run


def test_saving_a_run_again_replaces_it(store: Store) -> None:
    run = Run(run_id="r1")
    store.save_run(run)
    done = run.model_copy(update={"status": "completed", "stage": "export"})
    store.save_run(done)
    assert store.get_run("r1") == done
    assert store.list_runs() == [done]


def test_an_unknown_run_is_none(store: Store) -> None:
    assert store.get_run("nope") is None


def test_runs_are_listed_oldest_first(store: Store) -> None:
    late = Run(run_id="late", created_at=T0 + timedelta(hours=1))
    early = Run(run_id="early", created_at=T0)
    store.save_run(late)
    store.save_run(early)
    assert [r.run_id for r in store.list_runs()] == ["early", "late"]


def test_cache_misses_an_unknown_fingerprint(store: Store) -> None:
    assert store.cached_response("nothing") is None


def test_cache_hits_a_successful_call_from_another_run(store: Store) -> None:
    reply = {"role": "assistant", "content": '{"stateful": true}'}
    store.record_llm_call(call(run_id="r1", response=reply))
    assert store.cached_response("fp1") == reply


def test_failed_calls_never_serve_the_cache(store: Store) -> None:
    store.record_llm_call(call(status="error", error="HTTP 500", response={"role": "assistant", "content": "x"}))
    store.record_llm_call(call(status="output_invalid", response={"role": "assistant", "content": "y"}))
    assert store.cached_response("fp1") is None


def test_the_first_successful_response_recorded_wins(store: Store) -> None:
    """A later run paying again for the same request does not change what others are served (before: the
    newest won, so a run with the cache off against a faulty endpoint replaced every later run's answers)."""
    store.record_llm_call(call(run_id="r2", response={"content": "new"}, created_at=T0 + timedelta(seconds=1)))
    store.record_llm_call(call(response={"content": "old"}, created_at=T0))
    assert store.cached_response("fp1") == {"content": "old"}


def test_every_answer_the_cache_may_serve_is_listed_in_the_order_it_is_tried(store: Store) -> None:
    store.record_llm_call(call(run_id="r2", response={"content": "second"}, created_at=T0 + timedelta(seconds=1)))
    store.record_llm_call(call(response={"content": "first"}, created_at=T0))
    assert store.cached_responses("fp1") == [{"content": "first"}, {"content": "second"}]


def test_an_answer_not_shared_is_served_to_no_other_run(store: Store) -> None:
    store.record_llm_call(call(run_id="off", response={"content": "x"}, shared=False))
    assert store.cached_response("fp1") is None
    assert store.cached_response("fp1", asker="other") is None


def test_an_answer_not_shared_is_served_to_its_own_run_first(store: Store) -> None:
    store.record_llm_call(call(run_id="A", response={"content": "a"}, created_at=T0))
    store.record_llm_call(call(run_id="off", response={"content": "own"}, shared=False,
                               created_at=T0 + timedelta(seconds=1)))
    assert store.cached_response("fp1", asker="off") == {"content": "own"}
    assert store.cached_response("fp1", asker="C") == {"content": "a"}


def test_a_run_restricted_to_its_own_answers_gets_only_those(store: Store) -> None:
    store.record_llm_call(call(run_id="A", response={"content": "a"}, created_at=T0))
    store.record_llm_call(call(run_id="eval", response={"content": "e"}, shared=False,
                               created_at=T0 + timedelta(seconds=1)))
    assert store.cached_responses("fp1", "eval") == [{"content": "e"}]
    assert store.cached_responses("fp1", "B") == []


def test_every_call_is_kept_for_audit(store: Store) -> None:
    store.record_llm_calls([call(response={"content": "a"}), call(status="cached", attempts=0)])
    assert store.llm_usage("r1")["mine"]["calls"] == 2


def test_usage_is_summed_per_stage_of_the_run(store: Store) -> None:
    store.record_llm_calls(
        [
            call("a", attempts=3, prompt_tokens=100, completion_tokens=10, cost_usd=0.5),
            call("b", attempts=1, repairs=1, prompt_tokens=50, completion_tokens=5, cost_usd=0.25),
            call("a", status="cached", attempts=0),
            call("c", stage="synth", prompt_tokens=7, completion_tokens=3, cost_usd=0.125),
            call("d", run_id="other", prompt_tokens=1000),
        ]
    )
    assert store.llm_usage("r1") == {
        "mine": {"calls": 3, "cached": 1, "retries": 2, "prompt_tokens": 150, "cached_tokens": 0, "completion_tokens": 15, "estimated_tokens": 0, "cost_usd": 0.75},
        "synth": {"calls": 1, "cached": 0, "retries": 0, "prompt_tokens": 7, "cached_tokens": 0, "completion_tokens": 3, "estimated_tokens": 0, "cost_usd": 0.125},
    }


def test_usage_of_a_run_without_calls_is_empty(store: Store) -> None:
    assert store.llm_usage("r1") == {}


def test_funnel_counts_each_step_from_the_statuses(store: Store) -> None:
    records = every_kind()
    by_type = {type(r): r for r in records}
    topic, candidate, scenario = by_type[EnvTopic], by_type[EnvCandidate], by_type[Scenario]
    extra = [
        source_task(1, stateful=False),
        source_task(2),
        topic.model_copy(update={"summary": "Dup", "selected": False}),
        candidate.model_copy(update={"class_code": "class X: pass\n", "status": "rejected"}),
        scenario.model_copy(update={"task": "Remove Dune.", "status": "rejected"}),
        scenario.model_copy(update={"task": "List books.", "status": "generated"}),
    ]
    store.upsert(records + extra, run_id="r1")
    store.upsert([source_task(7)], run_id="r2")
    assert store.funnel("r1") == {
        "source_tasks": 3,
        "stateful_tasks": 1,
        "topics": 2,
        "selected_topics": 1,
        "candidates": 2,
        "accepted_envs": 1,
        "scenarios": 3,
        "verified_scenarios": 1,
        "trajectories": 1,
    }
    assert list(store.funnel("r1")) == [
        "source_tasks", "stateful_tasks", "topics", "selected_topics", "candidates", "accepted_envs",
        "scenarios", "verified_scenarios", "trajectories",
    ]
    assert by_type[AcceptedEnv] and by_type[Trajectory] and by_type[SourceTask]


def test_funnel_of_an_unknown_run_is_all_zero(store: Store) -> None:
    assert set(store.funnel("nope").values()) == {0}
