"""What every stage of one run needs, opened once and closed once.

The orchestrator (`tasks.context.open_context`, used by the Prefect flows) builds one `RunContext`
per process and hands it to the stage functions; core never constructs the sandbox itself. Keeping the store, the gateway and the sandbox pool in one
object (instead of module globals) is what lets tests run two factories side by side.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from envscaler_core.config import Settings
from envscaler_core.models.base import utcnow
from envscaler_core.models.run import Run
from envscaler_core.runtime import EnvRuntime


@dataclass
class RunContext:
    run_id: str
    settings: Settings
    store: Any  # envscaler_core.store.Store
    gateway: Any  # envscaler_core.llm.LLMGateway
    runtime: EnvRuntime
    _owned: list[Any] = field(default_factory=list, repr=False)
    _run_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def close(self) -> None:
        """Close what this context opened itself (not what the caller passed in)."""
        while self._owned:
            self._owned.pop().close()

    def update_run(self, **changes: Any) -> Run:
        """Read-modify-write of the run row under one lock (the stage, the progress publisher and the
        ingest all change it), stamping `updated_at`."""
        with self._run_lock:
            run = self.store.get_run(self.run_id)
            if run is None:
                raise ValueError(f"run {self.run_id!r} is not in the store {self.store.url}")
            run = Run.model_validate(run.model_dump() | changes | {"updated_at": utcnow()})
            self.store.save_run(run)
            return run

    def set_stage(self, stage: str, status: str = "running", error: str | None = None) -> Run:
        return self.update_run(stage=stage, status=status, error=error)
