"""The report of an evaluation run (`envscaler eval bfcl-mt`): accuracy per subset and one row per task
(verdict, the checker's error type and message, turns, tool calls), instead of a factory funnel that
would be all zeros."""

from __future__ import annotations

from typing import Any

from envscaler_core.pipeline.report import build_summary
from envscaler_core.report.env_section import clip, esc, verdict_badge

ROWS = 2000


def render_evaluation(store: Any, run_id: str, generated_at: str, *, killed: str | None = None) -> str:
    from envscaler_core.models import BFCLTaskResult
    from envscaler_core.report.page import CSS, GENERATOR

    summary = build_summary(store, run_id)
    if killed:  # see render_report
        summary = summary.model_copy(update={"status": "interrupted", "error": summary.error or killed})
    ev = summary.evaluation or {}
    subsets = ev.get("subsets") or {}
    rows = "".join(f"<tr><td>{esc(name)}</td><td class=num>{sc['tasks']}</td><td class=num>{sc['valid']}</td>"
                   f"<td class=num>{100 * sc['accuracy']:.2f}</td></tr>" for name, sc in subsets.items())
    if len(subsets) > 1 and ev.get("overall") is not None:
        rows += f"<tr><td><b>overall (mean)</b></td><td></td><td></td><td class=num><b>{100 * ev['overall']:.2f}</b></td></tr>"
    results = sorted(store.query(BFCLTaskResult, run_id=run_id), key=lambda r: (r.subset, r.task_id))
    tasks = "".join(f"<tr><td><code>{esc(r.task_id)}</code></td><td>{esc(r.subset)}</td><td>{verdict_badge(r.valid)}</td>"
                    f"<td>{esc(r.error_type or '')}</td><td class=reason>{esc(clip(r.error_message or '', 300))}</td>"
                    f"<td class=num>{r.turns}</td><td class=num>{r.tool_calls}</td></tr>" for r in results[:ROWS])
    state = "complete" if ev.get("complete") else "incomplete"
    return (f"<!doctype html><html lang=en><head><meta charset=utf-8>{GENERATOR}<title>BFCL evaluation {esc(run_id)}</title>"
            f"<style>{CSS}</style></head><body><header><h1>BFCL multi-turn evaluation {esc(run_id)} · "
            f"{esc(summary.status)}</h1><div class=meta>agent {esc(ev.get('agent'))} · model {esc(ev.get('model'))} · "
            f"{state} · generated {esc(generated_at)}</div></header><main><section><h2>Accuracy per subset</h2>"
            "<p class=small>An evaluation run: scored by BFCL's own checker; it has no factory funnel.</p>"
            "<table class=grid style='max-width:560px'><thead><tr><th>subset</th><th class=num>tasks</th>"
            f"<th class=num>valid</th><th class=num>accuracy %</th></tr></thead><tbody>{rows}</tbody></table></section>"
            f"<section><h2>Tasks ({len(results)})</h2><div class=scroll><table class=grid><thead><tr><th>task</th>"
            "<th>subset</th><th>verdict</th><th>error type</th><th>message</th><th class=num>turns</th>"
            f"<th class=num>tool calls</th></tr></thead><tbody>{tasks}</tbody></table></div></section></main></body></html>")
