"""Spec (issue 6): the factory under a budget cap and under LLM faults at scale.

Both run the real flow in-process against the session Prefect server, the session mock LLM over
HTTP and the real sandbox; each compares its funnel with an undisturbed run of the same config.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from envscaler_core.store import Store
from flows.factory import factory_flow
from tests.fixtures.small_run import SMALL_RUN_GROUP
from tests.flows.test_factory import SLICE, small_settings

pytestmark = [pytest.mark.prefect, pytest.mark.slow, pytest.mark.xdist_group(SMALL_RUN_GROUP)]


def run(run_id: str, cfg: dict[str, Any]) -> dict[str, Any]:
    return asyncio.run(factory_flow(run_id=run_id, sources=[str(SLICE)], config=cfg))


@pytest.fixture
def reference(small_factory_run: dict[str, Any]) -> dict[str, Any]:
    """The undisturbed run of the same config: the session's small run, which test_factory.py inspects."""
    return small_factory_run["summary"]


def test_budget_cap_stops_resumably_and_raising_it_finishes_the_run(
        reference: dict[str, Any], mock_server: Any, tmp_path: Path) -> None:
    spent = sum(u["prompt_tokens"] + u["completion_tokens"] for u in reference["usage"].values())
    capped = small_settings(tmp_path, mock_server, "budget", budget={"max_tokens": spent // 3})
    stopped = run("capped", capped)
    assert stopped["status"] == "stopped_budget"
    assert stopped["funnel"] != reference["funnel"], "a third of the budget finished the whole run"
    assert any(v > 0 for v in stopped["funnel"].values()), "nothing was kept from before the stop"

    raised = {**capped, "budget": {"max_tokens": spent * 2}}
    done = run("capped", raised)
    assert done["status"] == "completed"
    assert done["funnel"] == reference["funnel"]
    resumed_tokens = sum(u["prompt_tokens"] + u["completion_tokens"] for u in done["usage"].values())
    assert resumed_tokens <= spent * 1.05, "the resumed run paid again for work done before the stop"


def test_run_under_429_500_malformed_and_timeouts_loses_nothing_and_counts_retries(
        reference: dict[str, Any], mock_stats_reset: Any, tmp_path: Path) -> None:
    mock = mock_stats_reset
    mock.set_faults(p_429=0.20, p_500=0.05, p_malformed=0.05, p_timeout=0.02, timeout_s=1.5, retry_after_s=0.05,
                    seed=7)
    cfg = small_settings(tmp_path, mock, "faults", llm={"timeout_s": 0.75, "max_retries": 10, "repair_attempts": 4,
                                                "backoff_base_s": 0.02, "backoff_max_s": 0.2})
    summary = run("faulty", cfg)
    injected = mock.stats()["faults_injected"]
    assert all(injected.get(kind, 0) > 0 for kind in ("429", "500", "malformed", "timeout")), injected
    assert summary["status"] == "completed"
    assert summary["funnel"] == reference["funnel"], "faults changed what the run produced"
    retries = sum(u["retries"] for u in summary["usage"].values())
    assert retries >= injected["429"] + injected["500"], (retries, injected)

    store = Store.from_url(cfg["store"]["url"])
    try:
        from envscaler_core.pipeline.report import build_summary, summary_markdown

        markdown = summary_markdown(build_summary(store, "faulty"))
    finally:
        store.close()
    header = next(line for line in markdown.splitlines() if line.startswith("| LLM stage |"))
    col = [c.strip() for c in header.strip("|").split("|")].index("retries")
    rows = [line for line in markdown.splitlines() if line.startswith("| ") and line.count("|") == header.count("|")
            and not line.startswith(("| LLM stage", "|---"))]
    assert sum(int(r.strip("|").split("|")[col]) for r in rows) == retries  # the artifact shows them all
