"""Spec: an evaluation run (`envscaler eval bfcl-mt`) is a run like the others for the read-only verbs:
`status` lists it and shows its results table, `report` writes its results page, `export` says in one
line that it has no training data, and `resume` points to the eval command."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.cli.helpers import assert_no_noise, assert_one_line_error, clean_env, envscaler

pytestmark = [pytest.mark.prefect]
RUN = "bfcl-gold"


@pytest.fixture(scope="module")
def evaluated(prefect_api: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("evalviews")
    (tmp / "home").mkdir()
    env = clean_env(tmp / "home", PREFECT_API_URL=prefect_api)
    out = envscaler("eval", "bfcl-mt", "--subset", "base", "--limit", "2", "--agent", "gold", "--run-id", RUN,
                    env=env, cwd=tmp)
    assert out.returncode == 0, out.stderr[-3000:]
    return {"env": env, "tmp": tmp, "data": tmp / "home" / ".local" / "share" / "envscaler"}


def test_status_lists_the_evaluation_and_shows_its_results(evaluated: dict[str, Any]) -> None:
    listed = envscaler("status", env=evaluated["env"])
    assert listed.returncode == 0 and RUN in listed.stdout, listed.stdout + listed.stderr
    shown = envscaler("status", RUN, env=evaluated["env"])
    assert shown.returncode == 0, shown.stderr
    assert "BFCL multi-turn evaluation" in shown.stdout and "accuracy %" in shown.stdout
    assert any(line.split()[:4] == ["base", "2", "2", "100.00"] for line in shown.stdout.splitlines()), shown.stdout
    data = json.loads(envscaler("status", RUN, "--json", env=evaluated["env"]).stdout)
    assert data["evaluation"]["subsets"]["base"] == {"tasks": 2, "valid": 2, "accuracy": 1.0}
    assert_no_noise(shown.stderr)


def test_report_writes_the_results_page(evaluated: dict[str, Any], tmp_path: Path) -> None:
    out = envscaler("report", RUN, env=evaluated["env"], cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    page = Path(out.stdout.strip())
    assert page.is_absolute() and page.is_file() and list(tmp_path.iterdir()) == []
    text = page.read_text()
    assert RUN in text and "base" in text and "100.00" in text


def test_export_says_there_is_nothing_to_export(evaluated: dict[str, Any], tmp_path: Path) -> None:
    out = envscaler("export", RUN, env=evaluated["env"], cwd=tmp_path)
    assert_one_line_error(out, f"run {RUN} is a BFCL multi-turn evaluation", "no envs")
    assert list(tmp_path.iterdir()) == []


def test_resume_points_to_the_eval_command(evaluated: dict[str, Any]) -> None:
    out = envscaler("resume", RUN, env=evaluated["env"])
    assert_one_line_error(out, f"envscaler eval bfcl-mt --run-id {RUN}")
