"""The run report: one self-contained HTML file (inline CSS, script and SVG; nothing fetched) that
shows a run's funnel, per-step figures, failure reasons, and per env its code, tools, validation
rounds, scenarios with their checks, and trajectories as a chat."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from envscaler_core.models.base import utcnow
from envscaler_core.report.data import collect
from envscaler_core.report.page import render


def render_report(store: Any, run_id: str, *, killed: str | None = None) -> str:
    """The factory report, or an evaluation run's results page. `killed`: why a run whose row still says
    running is known to be dead (the caller could open its DuckDB file, which a live run holds): the
    page then says interrupted, with that reason, as `status` does."""
    generated = utcnow().strftime("%Y-%m-%d %H:%M UTC")
    run = store.get_run(run_id)
    if run is not None and "eval" in run.config:
        from envscaler_core.report.eval_page import render_evaluation

        return render_evaluation(store, run_id, generated, killed=killed)
    data = collect(store, run_id)
    if killed:
        update = {"status": "interrupted", "error": data.run.error or killed}
        data = data.model_copy(update={"run": data.run.model_copy(update=update),
                                       "summary": data.summary.model_copy(update=update)})
    return render(data, generated)


def write_report(store: Any, run_id: str, target: Path, *, killed: str | None = None) -> Path:
    """Write atomically (a reader never sees half a page), with the same permissions as the exports
    beside it (the umask's, usually 0644), and return the absolute path."""
    from envscaler_core.export.atomic import atomic_output

    target = Path(target).expanduser().resolve()
    page = render_report(store, run_id, killed=killed).encode("utf-8")
    with atomic_output(target) as fh:
        fh.write(page)
    return target


__all__ = ["render_report", "write_report"]
