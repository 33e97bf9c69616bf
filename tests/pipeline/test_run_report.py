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
    svg = funnel_svg({"source_tasks": 80, "stateful_tasks": 20, "accepted_envs": 0})
    bars = re.findall(r'<rect[^>]*width="(\d+)"', svg)
    assert len(bars) == 3 and int(bars[0]) > int(bars[1]) > int(bars[2]) == 0
    assert "20 (25%)" in svg and 'id="funnel-chart"' in svg


DEMO_FUNNEL = {"source_tasks": 24, "stateful_tasks": 6, "topics": 6, "selected_topics": 3, "candidates": 3,
               "accepted_envs": 2, "scenarios": 4, "verified_scenarios": 3, "trajectories": 6}


def test_no_funnel_label_shows_a_share_above_100_percent() -> None:
    """Scenarios (several per env) and trajectories (several per scenario) multiply: 'x per' instead."""
    text = plain(funnel_svg(DEMO_FUNNEL))
    shares = [int(p) for p in re.findall(r"\((\d+)%\)", text)]
    assert shares and max(shares) <= 100
    assert "4 (2.0 per env)" in text and "6 (2.0 per verified scenario)" in text
    assert "3 (75%)" in text  # verified of generated scenarios


def test_a_stage_after_an_empty_one_shows_no_share() -> None:
    text = plain(funnel_svg({"source_tasks": 3, "stateful_tasks": 0, "topics": 0}))
    assert "0 (0%)" in text and text.count("%") == 1


@pytest.mark.parametrize(("text", "limit", "expected"), [
    ("short enough", 20, "short enough"),
    ("the quick brown fox jumps over the lazy dog", 20, "the quick brown fox…"),
    ("x" * 30, 10, "x" * 10 + "…"),
    ("cut at a comma, then more words here", 16, "cut at a comma…"),
])
def test_clipped_text_ends_in_an_ellipsis_at_a_word(text: str, limit: int, expected: str) -> None:
    from envscaler_core.report.env_section import clip

    assert clip(text, limit) == expected
