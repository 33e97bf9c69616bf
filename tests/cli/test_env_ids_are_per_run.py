"""Spec (red team 8, F4): an env id is unique within a run, not within a store, so every command printed for
one run's env names that run (`--run <id>`, shell-quoted), and `serve-mcp ID` without `--run` refuses when
two runs hold different code under that id, naming both. Before, run `good`'s report printed
`envscaler serve-mcp env_sh2`; after an import `evil` stored other code under `env_sh2`, pasting it served
run evil's code (`--run` defaulted to the newest run that has the id).

Real imports into one DuckDB store (real sandbox), the real report and status text, the real CLI."""

from __future__ import annotations

import html
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from envscaler_core.pipeline.report import build_summary, summary_text
from envscaler_core.report import render_report
from envscaler_core.store import Store
from tests.cli.helpers import clean_env
from tests.cli.test_pasted_commands_quote_data import SHOP, _import_shop_as

EVIL = SHOP.replace('"""Buy one of an item."""', '"""Buy one of an item (other code)."""')
RUN = "good"


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory: pytest.TempPathFactory, sandbox_pool: Any) -> tuple[Path, Any]:
    """Run `RUN` and then run `evil`, each with other code under the env id `env_sh2`, in one store."""
    tmp = tmp_path_factory.mktemp("two-runs")
    _import_shop_as("env_sh2", RUN, tmp, sandbox_pool)
    return tmp, _import_shop_as("env_sh2", "evil", tmp, sandbox_pool, code=EVIL)


def test_status_prints_the_play_command_with_the_runs_id(two_runs: tuple[Path, Any]) -> None:
    _, settings = two_runs
    with Store.from_url(settings.store.url) as store:
        text = summary_text(build_summary(store, RUN))
    listed = re.search(r"^envs: .*\(play with one: (.*) ENV_ID\)$", text, re.M)
    assert listed is not None, text
    assert shlex.split(listed.group(1)) == ["envscaler", "serve-mcp", "--run", RUN]


def test_the_report_prints_the_play_command_with_the_runs_id(two_runs: tuple[Path, Any]) -> None:
    _, settings = two_runs
    with Store.from_url(settings.store.url) as store:
        page = render_report(store, RUN)
    shown = re.search(r"Play with it: <code>(.*?)</code>", page)
    assert shown is not None
    assert shlex.split(html.unescape(shown.group(1))) == ["envscaler", "serve-mcp", "--run", RUN, "env_sh2"]


def test_serve_mcp_without_run_refuses_an_id_two_runs_hold_with_other_code(two_runs: tuple[Path, Any]) -> None:
    tmp, settings = two_runs
    out = subprocess.run([sys.executable, "-m", "envscaler.cli", "serve-mcp", "env_sh2", "--db", settings.store.url],
                         capture_output=True, text=True, env=clean_env(tmp), timeout=120, stdin=subprocess.DEVNULL)
    assert out.returncode == 2, out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), out.stderr
    assert "env_sh2" in lines[0] and "'evil'" in lines[0] and repr(RUN) in lines[0] and "--run" in lines[0], lines[0]
