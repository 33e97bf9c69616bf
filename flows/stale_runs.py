"""Earlier flow runs of the same run that died without telling Prefect, marked Crashed on the dashboard.

A `kill -9` (or an OOM kill, a lost VM) of `envscaler run` leaves its flow run "Running" in Prefect
forever: nothing is left to report its end, and no worker watches a flow run the CLI started. The
resume starts a new flow run under the same name, and the dashboard then shows the phantom next to
it (an outside check counted 19 of them after 19 killed runs). When this flow run holds a DuckDB
store, its single-writer lock proves that no other process works on that store, so every other flow
run of this run, shard and store still in a running state is dead: it is marked Crashed, naming the
flow run that took over. On a shared store (Postgres) other shards and processes may be alive, so
nothing is marked there.
"""

from __future__ import annotations

import logging
from typing import Any

STALE_STATES = ("RUNNING", "PENDING")
log = logging.getLogger(__name__)


def holds_exclusive_store(url: str) -> bool:
    return url.startswith("duckdb:")


def is_stale(other: Any, me: Any, parameters: dict[str, Any]) -> bool:
    """Another flow run of the same flow, run id, shard and store, not this one."""
    theirs = other.parameters or {}
    return (other.id != me.id and other.flow_id == me.flow_id and theirs.get("run_id") == parameters.get("run_id")
            and theirs.get("shard_index", 0) == parameters.get("shard_index", 0)
            and theirs.get("shard_count", 1) == parameters.get("shard_count", 1)
            and _store(theirs) == _store(parameters))


def _store(parameters: dict[str, Any]) -> Any:
    config = parameters.get("config")
    return config.get("store", {}).get("url") if isinstance(config, dict) else None


async def crash_stale_runs(store_url: str) -> int:
    """Mark this run's dead flow runs Crashed; returns how many. Best effort: the dashboard's bookkeeping
    never stops a run, so any failure here is logged and ignored."""
    if not holds_exclusive_store(store_url):
        return 0
    try:
        from prefect.client.orchestration import get_client
        from prefect.client.schemas.filters import (
            FlowRunFilter,
            FlowRunFilterName,
            FlowRunFilterState,
            FlowRunFilterStateType,
        )
        from prefect.context import FlowRunContext
        from prefect.states import Crashed

        context = FlowRunContext.get()
        if context is None or context.flow_run is None:
            return 0
        me = context.flow_run
        parameters = dict(me.parameters or {})
        async with get_client() as client:
            candidates = await client.read_flow_runs(flow_run_filter=FlowRunFilter(
                name=FlowRunFilterName(any_=[me.name]),
                state=FlowRunFilterState(type=FlowRunFilterStateType(any_=list(STALE_STATES)))), limit=200)
            stale = [run for run in candidates if is_stale(run, me, parameters)]
            for run in stale:
                await client.set_flow_run_state(run.id, Crashed(
                    message=f"its process ended without reporting (killed?); flow run {me.id} holds the store now "
                            "and continues the run"), force=True)
        return len(stale)
    except Exception as exc:  # noqa: BLE001 - bookkeeping for the dashboard only
        log.warning("could not mark earlier flow runs of this run as crashed: %s: %s", type(exc).__name__, exc)
        return 0
