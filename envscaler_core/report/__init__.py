"""The run report: one self-contained HTML file (inline CSS, script and SVG; nothing fetched) that
shows a run's funnel, per-step figures, failure reasons, and per env its code, tools, validation
rounds, scenarios with their checks, and trajectories as a chat."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from envscaler_core.models.base import utcnow
from envscaler_core.report.data import collect
from envscaler_core.report.page import render


def render_report(store: Any, run_id: str) -> str:
    return render(collect(store, run_id), utcnow().strftime("%Y-%m-%d %H:%M UTC"))


def write_report(store: Any, run_id: str, target: Path) -> Path:
    """Write atomically (a reader never sees half a page) and return the absolute path."""
    from envscaler_core.pipeline.progress import write_text_atomic

    target = Path(target).resolve()
    write_text_atomic(target, render_report(store, run_id))
    return target


__all__ = ["render_report", "write_report"]
