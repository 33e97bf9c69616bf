"""Inline SVG charts for the report (no script library, no network): the funnel as horizontal bars."""

from __future__ import annotations

import html

LABELS = {
    "source_tasks": "source tasks", "stateful_tasks": "stateful tasks", "topics": "topics",
    "selected_topics": "selected topics", "candidates": "env candidates", "accepted_envs": "accepted envs",
    "scenarios": "scenarios", "verified_scenarios": "verified scenarios", "trajectories": "trajectories",
}


# A stage that filters its input shows the share it kept; a stage that multiplies (several scenarios per
# env, several rollouts per scenario) shows how many per input instead: a percentage above 100 says nothing.
KEPT_OF = {"stateful_tasks": "source_tasks", "topics": "stateful_tasks", "selected_topics": "topics",
           "candidates": "selected_topics", "accepted_envs": "candidates", "verified_scenarios": "scenarios"}
PER = {"scenarios": ("accepted_envs", "per env"), "trajectories": ("verified_scenarios", "per verified scenario")}


def funnel_share(funnel: dict[str, int], key: str) -> str:
    """' (45%)' for a filter stage, ' (2.0 per env)' for a multiplying one, '' when there is nothing to compare."""
    if key in KEPT_OF and funnel.get(KEPT_OF[key]):
        return f" ({100 * funnel[key] / funnel[KEPT_OF[key]]:.0f}%)"
    if key in PER and funnel.get(PER[key][0]):
        return f" ({funnel[key] / funnel[PER[key][0]]:.1f} {PER[key][1]})"
    return ""


def funnel_svg(funnel: dict[str, int], width: int = 720) -> str:
    """One bar per funnel stage, scaled to the largest count (each bar at least a sliver when non-zero),
    with the count and, for a filtering stage, the share it kept (see `KEPT_OF`, `PER`)."""
    rows = list(funnel.items())
    label_w, bar_h, gap, pad = 160, 26, 8, 10
    height = pad * 2 + len(rows) * (bar_h + gap)
    top = max((v for _, v in rows), default=0) or 1
    room = width - label_w - 230
    parts = [f'<svg id="funnel-chart" class="chart" role="img" aria-label="run funnel" xmlns="http://www.w3.org/2000/svg" '
             f'viewBox="0 0 {width} {height}" width="{width}" height="{height}">']
    for i, (key, value) in enumerate(rows):
        y = pad + i * (bar_h + gap)
        w = 0 if value == 0 else max(3, round(room * value / top))
        share = funnel_share(funnel, key)
        name = html.escape(LABELS.get(key, key))
        parts.append(f'<text x="{label_w - 8}" y="{y + bar_h * 0.68:.1f}" text-anchor="end" class="lbl">{name}</text>')
        parts.append(f'<rect x="{label_w}" y="{y}" width="{w}" height="{bar_h}" rx="3" class="bar bar{i % 3}">'
                     f'<title>{name}: {value}</title></rect>')
        parts.append(f'<text x="{label_w + w + 6}" y="{y + bar_h * 0.68:.1f}" class="val">{value}{share}</text>')
    parts.append("</svg>")
    return "".join(parts)


def bar_row_svg(values: list[tuple[str, float]], unit: str = "", width: int = 360) -> str:
    """A compact horizontal bar list (per-step time or cost)."""
    top = max((v for _, v in values), default=0) or 1
    bar_h, gap, label_w = 16, 5, 120
    height = len(values) * (bar_h + gap) + 4
    parts = [f'<svg class="chart small" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" '
             f'width="{width}" height="{height}">']
    for i, (name, value) in enumerate(values):
        y = 2 + i * (bar_h + gap)
        w = 0 if value <= 0 else max(2, round((width - label_w - 70) * value / top))
        parts.append(f'<text x="{label_w - 6}" y="{y + 12}" text-anchor="end" class="lbl">{html.escape(name)}</text>'
                     f'<rect x="{label_w}" y="{y}" width="{w}" height="{bar_h}" rx="2" class="bar bar1"/>'
                     f'<text x="{label_w + w + 4}" y="{y + 12}" class="val">{value:g}{unit}</text>')
    parts.append("</svg>")
    return "".join(parts)
