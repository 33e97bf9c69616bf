"""A gateway on a scripted endpoint, and its audit rows read back out of a real Store (read-only SQL)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import text

from envscaler_core.llm import LLMGateway
from tests.fixtures.llm import mock_llm_settings

COLUMNS = "stage, prompt_id, model, status, attempts, repairs, prompt_tokens, completion_tokens, cost_usd, error"


def call_rows(store: Any, run_id: str) -> list[dict[str, Any]]:
    """The run's LLM call rows, oldest first."""
    with store.engine.connect() as conn:
        result = conn.execute(
            text(f"SELECT {COLUMNS} FROM llm_calls WHERE run_id = :run ORDER BY created_at, call_id"),
            {"run": run_id},
        )
        return [dict(row._mapping) for row in result]


def scripted_gateway(endpoint: Any, store: Any = None, budget: Any = None, **overrides: Any) -> LLMGateway:
    """A gateway on a scripted endpoint (`tests/llm/scripted_endpoint.py`): no response cache, backoff of
    milliseconds (each overridable); its calls are audited under run "r1" when it has a store."""
    settings = mock_llm_settings(endpoint.base_url, **{"cache": False, "backoff_base_s": 0.01, "backoff_max_s": 0.05,
                                                       **overrides})
    return LLMGateway(settings, store=store, run_id="r1" if store is not None else None, budget=budget)
