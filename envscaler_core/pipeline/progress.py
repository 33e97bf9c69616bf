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


def progress_path(store_url: str, run_id: str, home: Path | None = None) -> Path:
    """Where a run publishes its progress: beside a DuckDB file (so `status` finds it from the store URL
    alone while the run holds the file), else under `home` (ENVSCALER_DATA_DIR) for server stores."""
    try:
        location = parse_store_url(store_url)
    except Exception:  # noqa: BLE001 - a bad URL fails elsewhere with its own message
        location = None
    if location is not None and location.path is not None:
        base = location.path.with_name(location.path.name + ".progress")
    else:
        base = (home or Path(tempfile.gettempdir())) / "progress"
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
                 funnel: Callable[[], dict[str, int]] | None = None, mock_llm: bool = False) -> None:
        self._lock = threading.Lock()
        self._usage = usage
        self._funnel = funnel
        self._base = self._totals()
        self.sinks = list(sinks or [])
        self.state = RunProgress(run_id=run_id, pid=os.getpid(), store=store, mock_llm=mock_llm)

    def _totals(self) -> tuple[int, int, float]:
        rows = self._usage().values()
        return (sum(int(u.get("calls", 0)) for u in rows),
                sum(int(u.get("prompt_tokens", 0)) + int(u.get("completion_tokens", 0)) for u in rows),
                sum(float(u.get("cost_usd", 0.0)) for u in rows))

    def _account(self) -> None:
        """Charge the ledger's growth since the last call to the current step."""
        calls, tokens, cost = self._totals()
        step = self.state.current
        if step is not None:
            base_calls, base_tokens, base_cost = self._base
            step.llm_calls += calls - base_calls
            step.tokens += tokens - base_tokens
            step.cost_usd = round(step.cost_usd + cost - base_cost, 8)
        self._base = (calls, tokens, cost)
        self.state.updated_at = utcnow()

    def step_started(self, name: str, total: int = 0) -> None:
        with self._lock:
            self._account()
            self._close_step()
            self.state.steps.append(StepProgress(name=name, total=total))
        self.publish(force=True)

    def batch_done(self, done: int, failed: int) -> None:
        with self._lock:
            step = self.state.current
            if step is not None:
                step.done += done
                step.failed += failed
        self.publish()

    def step_finished(self) -> None:
        with self._lock:
            self._account()
            self._close_step()
        self.publish(force=True)

    def finish(self, status: str) -> RunProgress:
        with self._lock:
            self._account()
            step = self.state.current
            if step is not None and step.finished_at is None and status not in ("completed", "empty"):
                step.stopped = status
            self._close_step()
            self.state.status = status
        self.publish(force=True)
        return self.snapshot()

    def _close_step(self) -> None:
        step = self.state.current
        if step is not None and step.finished_at is None:
            step.finished_at = utcnow()

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

