"""Spec: Prefect retries only what is transient; the gateway already retried the LLM faults it could."""

from __future__ import annotations

import pytest
from prefect.states import Failed

from envscaler_core.llm.errors import BudgetExceeded, LLMRequestRejected, LLMUnavailableError
from tasks.stages import is_transient


@pytest.mark.parametrize("exc", [LLMUnavailableError("endpoint down"), ConnectionResetError(), TimeoutError()])
def test_outages_are_retried(exc: Exception) -> None:
    assert is_transient(None, None, Failed(data=exc))


@pytest.mark.parametrize("exc", [BudgetExceeded("spent"), LLMRequestRejected("401", 401), ValueError("bug"),
                                 FileNotFoundError("x")])
def test_permanent_failures_are_not_retried(exc: Exception) -> None:
    assert not is_transient(None, None, Failed(data=exc))


def test_retry_condition_works_inside_a_running_event_loop() -> None:
    import asyncio

    async def inside() -> bool:
        return is_transient(None, None, Failed(data=LLMUnavailableError("down")))

    assert asyncio.run(inside())


def test_run_ids_that_fold_to_the_same_artifact_key_publish_under_different_keys() -> None:
    from flows.progress import artifact_key

    folded = {artifact_key("bfcl", r) for r in ("My_Run.1", "my-run-1", "MY.RUN_1")}
    assert len(folded) == 3 and artifact_key("bfcl", "my-run-1") == "bfcl-my-run-1"
    assert all(len(k) <= 100 and k == k.lower() for k in folded | {artifact_key("funnel", "x" * 300)})
