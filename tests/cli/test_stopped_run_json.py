"""Spec: `run --json` and `resume --json` print the run's summary on stdout even when the run stops (a
rejected request: exit 2, the error line on stderr), as they do for a finished run. An outside check
(`/tmp/rt5-replies`, mode deepseek_risk): a run stopped on a rejected request printed nothing on stdout
although the store held its funnel. Run as `python -m envscaler.cli` from this tree, against the mock and
a real Prefect server."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.cli.helpers import ROOT, SLICE, SMALL_TOML, assert_one_line_error, clean_env


def _cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "envscaler.cli", *args], capture_output=True, text=True, env=env,
                          cwd=ROOT, timeout=300, stdin=subprocess.DEVNULL)


@pytest.fixture
def rejected(tmp_path: Path, mock_server: Any, prefect_api: str) -> dict[str, Any]:
    """A user whose key the endpoint rejects (HTTP 401: a request refused, never retried)."""
    (tmp_path / "home").mkdir()
    config = tmp_path / "factory.toml"
    config.write_text(SMALL_TOML)
    env = clean_env(tmp_path / "home", OPENAI_BASE_URL=mock_server.base_url, OPENAI_API_KEY="bad-key",
                    ENVSCALER_DB_URL=f"duckdb:///{tmp_path / 'runs.duckdb'}", PREFECT_API_URL=prefect_api)
    return {"env": env, "config": config}


@pytest.mark.prefect
def test_a_run_stopped_by_a_rejected_request_still_prints_its_summary_as_json(rejected: dict[str, Any]) -> None:
    out = _cli("run", "-s", str(SLICE), "-c", str(rejected["config"]), "--run-id", "r-stop", "--quiet", "--json",
               env=rejected["env"])
    assert_one_line_error(out, "Incorrect API key")
    summary = json.loads(out.stdout)
    assert (summary["run_id"], summary["status"]) == ("r-stop", "failed")
    assert "Incorrect API key" in summary["error"] and "funnel" in summary


@pytest.mark.prefect
def test_a_resume_stopped_by_a_rejected_request_still_prints_its_summary_as_json(rejected: dict[str, Any]) -> None:
    _cli("run", "-s", str(SLICE), "-c", str(rejected["config"]), "--run-id", "r-stop", "--quiet", env=rejected["env"])
    out = _cli("resume", "r-stop", "--quiet", "--json", env=rejected["env"])
    assert_one_line_error(out, "Incorrect API key")
    assert json.loads(out.stdout)["status"] == "failed"
