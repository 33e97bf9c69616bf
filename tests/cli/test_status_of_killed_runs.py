"""Spec: `status` does not call a run running when no process runs it, and points a stopped run the
right way. A run killed with SIGKILL cannot record that it stopped; its DuckDB file, which a live run
holds, opens freely, so `status` shows the run as interrupted with the command that continues it (a
red team saw killed runs shown `running`, their elapsed time still growing, for as long as it looked)."""

from __future__ import annotations

import json
from pathlib import Path

from envscaler_core.models import Run
from envscaler_core.store import Store
from tests.cli.helpers import clean_env, envscaler


def _left_running(tmp_path: Path, run_id: str) -> str:
    url = f"duckdb:///{tmp_path / 'killed.duckdb'}"
    with Store.from_url(url) as store:
        store.save_run(Run(run_id=run_id, status="running", stage="validate"))
    return url


def test_a_run_whose_process_is_gone_shows_as_interrupted_with_the_resume_command(tmp_path: Path) -> None:
    url = _left_running(tmp_path, "killed")
    out = envscaler("status", "killed", "--db", url, "--json", env=clean_env(tmp_path))
    assert out.returncode == 0, out.stderr
    shown = json.loads(out.stdout)
    assert shown["status"] == "interrupted"
    assert "its process is gone" in shown["error"] and "resume killed" in shown["error"]


def test_watching_such_a_run_ends_at_once_on_the_same_verdict(tmp_path: Path) -> None:
    url = _left_running(tmp_path, "killed")
    out = envscaler("status", "killed", "--db", url, "--watch", env=clean_env(tmp_path), timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[0] == "run killed: interrupted"


def test_a_plain_path_store_and_the_run_list_say_interrupted_too(tmp_path: Path) -> None:
    _left_running(tmp_path, "killed")
    path = str(tmp_path / "killed.duckdb")  # the README's form: a path, not a URL
    shown = json.loads(envscaler("status", "killed", "--db", path, "--json", env=clean_env(tmp_path)).stdout)
    assert shown["status"] == "interrupted" and f"resume killed --db {path}" in shown["error"]
    listed = json.loads(envscaler("status", "--db", path, "--json", env=clean_env(tmp_path)).stdout)
    assert [(r["run_id"], r["status"]) for r in listed] == [("killed", "interrupted")]


def test_the_report_of_such_a_run_says_interrupted_not_running(tmp_path: Path) -> None:
    url = _left_running(tmp_path, "killed")
    target = tmp_path / "killed.html"
    out = envscaler("report", "killed", "--db", url, "-o", str(target), env=clean_env(tmp_path))
    assert out.returncode == 0, out.stderr
    page = target.read_text(encoding="utf-8")
    assert "EnvScaler run killed · interrupted" in page and "· running" not in page
    assert "its process is gone" in page
    with Store.from_url(url) as store:
        assert store.get_run("killed").status == "running", "only a resume changes the stored row"


def test_a_budget_stopped_evaluation_is_told_to_continue_through_eval(capsys) -> None:  # type: ignore[no-untyped-def]
    """`resume` refuses evaluations, so its hint must not point there (a verifier followed it)."""
    import pytest
    import typer

    from envscaler.status import print_summary

    summary = {"run_id": "bud", "status": "stopped_budget", "funnel": {}, "origin": "eval", "evaluation": {}}
    with pytest.raises(typer.Exit) as stop:
        print_summary(summary, as_json=True)
    assert stop.value.exit_code == 3
    err = capsys.readouterr().err
    assert "eval bfcl-mt --run-id bud" in err and "resume bud" not in err
