"""Open the store, the gateway and the sandbox pool for one run (orchestrator side only)."""

from __future__ import annotations

from typing import Any

from envscaler_core.config import Settings
from envscaler_core.pipeline import RunContext
from envscaler_core.runtime import EnvRuntime


def open_context(settings: Settings, run_id: str, *, store: Any = None, runtime: EnvRuntime | None = None,
                 gateway: Any = None) -> RunContext:
    """Reuse what the caller passes; open (and later close, via `ctx.close()`) the rest."""
    from envscaler_core.llm import LLMGateway
    from envscaler_core.store import Store
    from sandbox import SandboxPool

    owned: list[Any] = []
    if store is None:
        store = Store.from_url(settings.store.url)
        owned.append(store)
    if runtime is None:
        runtime = SandboxPool(settings.sandbox)
        owned.append(runtime)
    if gateway is None:
        gateway = LLMGateway(settings.llm, store=store, run_id=run_id, budget=settings.budget)
    return RunContext(run_id=run_id, settings=settings, store=store, gateway=gateway, runtime=runtime, _owned=owned)
