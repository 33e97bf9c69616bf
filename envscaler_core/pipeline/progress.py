"""Live progress of one run: counted by the orchestrator, published to sinks while the run is active.

The tracker is fed by the flow (a step starts with N pending items, batches finish with done/failed
counts) and reads the gateway's ledger for LLM calls, tokens and cost, so each step's figures are the
ledger's growth while it ran. Sinks are throttled independently: the JSON file beside the store is
cheap (every tick), the run row and a Prefect artifact less so. A sink that fails is switched off
with one warning instead of stopping the run: progress is a view, never a reason to lose work.
"""

from __future__ import annotations

import logging
import os
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from envscaler_core.models.base import utcnow
from envscaler_core.models.progress import RunProgress, StepProgress
from envscaler_core.store.urls import parse_store_url

log = logging.getLogger(__name__)

Usage = Callable[[], dict[str, dict[str, Any]]]
_LEDGER_FAMILIES = {"agent": "rollout", "user_sim": "rollout", "check": "scen"}


def _family(stage: str) -> str:
    """`validate_judge`, `validate.dedup` -> `validate`; the rollout's and the checks' own ledger names too."""
    head = stage.replace(".", "_").split("_", 1)[0]
    return _LEDGER_FAMILIES.get(head, head)


def progress_path(store_url: str, run_id: str, home: Path | None = None) -> Path:
    """Where a run publishes its progress: beside a DuckDB file (so `status` finds it from the store URL
    alone while the run holds the file), else under `home` (ENVSCALER_DATA_DIR) for server stores."""
    try:
        location = parse_store_url(store_url)
    except Exception:  # noqa: BLE001 - a bad URL fails elsewhere with its own message
        location = None
    base = (location.beside(".progress") if location is not None else None) or \
        (home or Path(tempfile.gettempdir())) / "progress"
    return base / f"{run_id}.json"


def write_text_atomic(path: Path, text: str) -> None:
    """Readers see the old file or the new one, never half of one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def read_progress(path: Path) -> RunProgress | None:
    try:
        return RunProgress.model_validate_json(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


class Sink:
    """A publication target called with snapshots at most every `interval_s` (always on `force`)."""

    def __init__(self, name: str, publish: Callable[[RunProgress], None], interval_s: float) -> None:
        self.name, self.publish, self.interval_s = name, publish, interval_s
        self.last = 0.0
        self.broken = False

    def offer(self, snapshot: RunProgress, force: bool) -> None:
        now = time.monotonic()
        if self.broken or (not force and now - self.last < self.interval_s):
            return
        self.last = now
        try:
            self.publish(snapshot)
        except Exception as exc:  # noqa: BLE001 - see the module docstring
            self.broken = True
            log.warning("progress sink %s switched off: %s: %s", self.name, type(exc).__name__, exc)


def file_sink(path: Path, interval_s: float = 0.5) -> Sink:
    return Sink(f"file {path}", lambda p: write_text_atomic(path, p.model_dump_json()), interval_s)


class ProgressTracker:
    """Thread-safe counts for one run; `publish()` offers a snapshot to every sink."""

    def __init__(self, run_id: str, usage: Usage, *, store: str = "", sinks: list[Sink] | None = None,
                 funnel: Callable[[], dict[str, int]] | None = None, mock_llm: bool = False,
                 resumed: bool = False, shard: str = "") -> None:
        self._lock = threading.Lock()
        self._usage = usage
        self._funnel = funnel
        self._base = self._totals()
        self.sinks = list(sinks or [])
        self.state = RunProgress(run_id=run_id, pid=os.getpid(), store=store, mock_llm=mock_llm, resumed=resumed,
                                 shard=shard)

    def _totals(self) -> dict[str, tuple[int, int, float]]:
        return {stage: (int(u.get("calls", 0)), int(u.get("prompt_tokens", 0)) + int(u.get("completion_tokens", 0)),
                        float(u.get("cost_usd", 0.0))) for stage, u in self._usage().items()}

    def _account(self) -> None:
        """Charge the ledger's growth since the last call: to the running step of the ledger stage's family
        (`validate_judge` to `validate`) when there is one, else to the current step. One step runs at a
        time in a staged run, so it gets everything; streamed stages run side by side and each gets its own."""
        totals = self._totals()
        for stage, (calls, tokens, cost) in totals.items():
            base_calls, base_tokens, base_cost = self._base.get(stage, (0, 0, 0.0))
            if (calls, tokens, cost) == (base_calls, base_tokens, base_cost):
                continue
            step = self._step_for(stage)
            if step is not None:
                step.llm_calls += calls - base_calls
                step.tokens += tokens - base_tokens
                step.cost_usd = round(step.cost_usd + cost - base_cost, 8)
        self._base = totals
        self.state.updated_at = utcnow()

    def _step_for(self, ledger_stage: str) -> StepProgress | None:
        family = _family(ledger_stage)
        running = self.state.running
        if len(running) > 1:
            for step in reversed(running):
                if _family(step.name) == family:
                    return step
        return self.state.current

    def step_started(self, name: str, total: int = 0) -> None:
        """The next step of a staged run: the one before it is finished."""
        self._start([StepProgress(name=name, total=total)])

    def steps_started(self, names: list[str]) -> None:
        """Steps that run side by side from now on (streamed stages); `items_added` grows their totals."""
        self._start([StepProgress(name=name) for name in names])

    def _start(self, steps: list[StepProgress]) -> None:
        with self._lock:
            self._account()
            for step in self.state.running:
                step.finished_at = utcnow()
            self.state.steps += steps
        self.publish(force=True)

    def items_added(self, name: str, count: int) -> None:
        with self._lock:
            step = self._running_step(name)
            if step is not None:
                step.total += count
        self.publish()

    def batch_done(self, done: int, failed: int, step_name: str | None = None) -> None:
        with self._lock:
            step = self._running_step(step_name) if step_name else self.state.current
            if step is not None:
                step.done += done
                step.failed += failed
        self.publish()

    def step_finished(self, name: str | None = None) -> None:
        """The current step (or the named running one) is done."""
        with self._lock:
            self._account()
            step = self._running_step(name) if name else self.state.current
            if step is not None and step.finished_at is None:
                step.finished_at = utcnow()
        self.publish(force=True)

    def finish(self, status: str) -> RunProgress:
        with self._lock:
            self._account()
            for step in self.state.running:
                if status not in ("completed", "empty"):
                    step.stopped = status
                step.finished_at = utcnow()
            self.state.status = status
        self.publish(force=True)
        return self.snapshot()

    def _running_step(self, name: str | None) -> StepProgress | None:
        return next((s for s in reversed(self.state.running) if s.name == name), None)

    def snapshot(self) -> RunProgress:
        with self._lock:
            self._account()
            return self.state.model_copy(deep=True)

    def publish(self, force: bool = False) -> None:
        if force and self._funnel is not None:
            try:
                funnel = self._funnel()
            except Exception:  # noqa: BLE001 - a view; the next forced publish tries again
                funnel = None
            if funnel is not None:
                with self._lock:
                    self.state.funnel = funnel
        snap = self.snapshot()
        for sink in self.sinks:
            sink.offer(snap, force)

