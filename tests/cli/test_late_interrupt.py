"""Spec: what `run` says when Ctrl-C (or SIGTERM) arrives is what the store holds. An interrupt that
lands after the run finished (it is recorded complete, the summary not yet printed) must not say the
run "stopped" nor mark it interrupted; one that lands mid-run marks it interrupted and gives the resume
command. `runner._interrupted` is the one place both go through; it is called here on a real DuckDB store."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import typer

from envscaler.runner import _interrupted
from envscaler_core.models import Run
from envscaler_core.store import Store


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store.from_url(f"duckdb:///{tmp_path / 'late.duckdb'}") as opened:
        yield opened


def _stopped(store: Store, run_id: str, capsys: pytest.CaptureFixture[str], **kwargs: object) -> tuple[int, str]:
    with pytest.raises(typer.Exit) as done:
        _interrupted(store, run_id, **kwargs)  # type: ignore[arg-type]
    return done.value.exit_code, capsys.readouterr().err


def test_a_ctrl_c_after_the_run_completed_says_it_completed(store: Store, capsys: pytest.CaptureFixture[str]) -> None:
    store.save_run(Run(run_id="r-done", status="completed"))
    code, err = _stopped(store, "r-done", capsys)
    assert code == 130 and "stopped" not in err
    assert "run r-done had already completed" in err and "envscaler status r-done" in err
    assert store.get_run("r-done").status == "completed"  # type: ignore[union-attr]


def test_a_ctrl_c_after_a_budget_stop_says_the_status_the_store_holds(store: Store, capsys: pytest.CaptureFixture[str]) -> None:
    store.save_run(Run(run_id="r-budget", status="stopped_budget"))
    code, err = _stopped(store, "r-budget", capsys)
    assert code == 130 and "had already finished with status stopped_budget" in err
    assert store.get_run("r-budget").status == "stopped_budget"  # type: ignore[union-attr]


def test_a_ctrl_c_mid_run_marks_it_interrupted_with_the_resume_command(store: Store, capsys: pytest.CaptureFixture[str]) -> None:
    store.save_run(Run(run_id="r-mid", status="running"))
    code, err = _stopped(store, "r-mid", capsys)
    assert code == 130 and "interrupted: run r-mid stopped; finished work is kept" in err and "resume r-mid" in err
    assert store.get_run("r-mid").status == "interrupted"  # type: ignore[union-attr]
