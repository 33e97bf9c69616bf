"""Spec: the printed results table (and the Prefect artifact built from the same rows) ends with the
"overall (mean)" row whatever the number of subsets, as the `--json` summary always has `overall`.
The real CLI (this worktree's code) in a subprocess, the session Prefect server, a real DuckDB file."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.prefect]

ROOT = Path(__file__).resolve().parents[2]


def test_a_single_subset_table_has_the_overall_row(prefect_api: str, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ENVSCALER_"))}
    env["PREFECT_API_URL"] = prefect_api
    out = subprocess.run([sys.executable, "-m", "envscaler.cli", "eval", "bfcl-mt", "--subset", "base", "--limit", "1",
                          "--run-id", "one-subset", "--db", f"duckdb:///{tmp_path / 'table.duckdb'}"],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL)
    assert out.returncode == 0, out.stderr[-3000:]
    rows = [line.split() for line in out.stdout.splitlines()]
    assert ["base", "1", "1", "100.00"] in rows
    assert ["overall", "(mean)", "100.00"] in rows
