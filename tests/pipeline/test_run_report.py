"""Spec: the report's pieces that do not need a run: Python highlighting keeps the code exactly, broken
code still renders, and the funnel chart draws one bar per stage."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest

from envscaler_core.report.charts import funnel_svg
from envscaler_core.report.highlight import highlight_python

ROOT = Path(__file__).resolve().parents[2]


def plain(rendered: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", rendered))


@pytest.mark.parametrize("source", [
    (ROOT / "envscaler_core" / "report" / "highlight.py").read_text(),
    'class A:\n    def f(self, x=1):\n        return f"{x} <ok> & done"  # c\n  bad indent\n',
    "x = (1,\n", 's = "unterminated\n', "", "\n\n",
])
def test_highlighting_keeps_every_character(source: str) -> None:
    assert plain(highlight_python(source)) == source


def test_keywords_strings_and_definitions_get_classes() -> None:
    out = highlight_python('def book(self, n=2):\n    return "ok"  # done\n')
    for fragment in ('<span class="k">def</span>', '<span class="f">book</span>', '<span class="sf">self</span>',
                     '<span class="n">2</span>', '<span class="s">&quot;ok&quot;</span>', '<span class="c"># done</span>'):
        assert fragment in out


def test_the_funnel_chart_has_a_bar_per_stage_scaled_to_the_largest() -> None:
    svg = funnel_svg({"source_tasks": 80, "topics": 20, "accepted_envs": 0})
    bars = re.findall(r'<rect[^>]*width="(\d+)"', svg)
    assert len(bars) == 3 and int(bars[0]) > int(bars[1]) > int(bars[2]) == 0
    assert "20 (25%)" in svg and 'id="funnel-chart"' in svg
