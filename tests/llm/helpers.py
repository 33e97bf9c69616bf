"""Reading the gateway's audit rows back out of a real Store (read-only SQL through its engine)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import text

COLUMNS = "stage, prompt_id, model, status, attempts, repairs, prompt_tokens, completion_tokens, cost_usd, error"


def call_rows(store: Any, run_id: str) -> list[dict[str, Any]]:
    """The run's LLM call rows, oldest first."""
    with store.engine.connect() as conn:
        result = conn.execute(
            text(f"SELECT {COLUMNS} FROM llm_calls WHERE run_id = :run ORDER BY created_at, call_id"),
            {"run": run_id},
        )
        return [dict(row._mapping) for row in result]
