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


def duckdb_file(url: Any) -> str | None:
    """The DuckDB file a store URL or plain path names (resolved, so `/p/s.duckdb` and
    `duckdb:////p/s.duckdb` are one store), None for a server store or anything unreadable."""
    from envscaler_core.store.urls import parse_store_url

    try:
        parsed = parse_store_url(str(url))
    except Exception:  # noqa: BLE001 - another flow run's parameters may hold anything
        return None
    return str(parsed.path.resolve()) if parsed.backend == "duckdb" and parsed.path is not None else None


def is_stale(other: Any, me: Any, parameters: dict[str, Any]) -> bool:
    """Another flow run of the same flow, run id, shard and store, not this one."""
    theirs = other.parameters or {}
    return (other.id != me.id and other.flow_id == me.flow_id and theirs.get("run_id") == parameters.get("run_id")
            and theirs.get("shard_index", 0) == parameters.get("shard_index", 0)
            and theirs.get("shard_count", 1) == parameters.get("shard_count", 1)
            and _store(parameters) is not None and _store(theirs) == _store(parameters))


def _store(parameters: dict[str, Any]) -> str | None:
    config = parameters.get("config")
    url = (config.get("store") or {}).get("url") if isinstance(config, dict) else None
    return duckdb_file(url) if url else None


async def crash_stale_runs(store_url: str) -> int:
    """Mark this run's dead flow runs Crashed; returns how many. Best effort: the dashboard's bookkeeping
    never stops a run, so any failure here is logged and ignored. Works for the factory and the eval
    flows alike (both take `run_id` and `config`); the store in the parameters is compared as the file
    it names, whichever way it was written."""
    if duckdb_file(store_url) is None:
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
