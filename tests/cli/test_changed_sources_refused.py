"""Spec: a source of an existing run that changed since the run first read it, or is gone, is refused in one
line (exit 2) by `run` and `resume` alike before the run's row is touched: the run keeps its status (a
refused re-run used to turn a completed run into `failed` at mine.ingest although nothing was stored)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from envscaler_core.config import load_settings, public_config
from envscaler_core.mine.source_report import inspect_sources
from envscaler_core.models import Run
from envscaler_core.store import Store
from tests.cli.helpers import assert_one_line_error, clean_env, envscaler

TASKS = ('{"task": "Book a table for two at an Italian restaurant tonight."}\n'
         '{"task": "Add milk and eggs to my shopping list."}\n')


def _row(db: Path, run_id: str) -> Run | None:
    store = Store.from_url(str(db))
    try:
        return store.get_run(run_id)
    finally:
        store.close()


def _made(tmp_path: Path, mock_server: Any, status: str) -> dict[str, Any]:
    """A run that read tasks.jsonl (its digest in the sources report), written straight into the store."""
    (tmp_path / "home").mkdir()
    source = tmp_path / "tasks.jsonl"
    source.write_text(TASKS)
    db = tmp_path / "runs.duckdb"
    settings = load_settings(environ={}, overrides={"store": {"url": str(db)}})
    store = Store.from_url(str(db))
    try:
        store.save_run(Run(run_id="r1", status=status, config=public_config(settings), sources=[str(source)],
                           sources_report=inspect_sources([str(source)])))
    finally:
        store.close()
    env = clean_env(tmp_path / "home", OPENAI_BASE_URL=mock_server.base_url, OPENAI_API_KEY="mock",
                    ENVSCALER_DB_URL=str(db))
    return {"env": env, "source": source, "db": db, "status": status}


@pytest.fixture(params=["completed", "interrupted"])
def made(request: pytest.FixtureRequest, tmp_path: Path, mock_server: Any) -> dict[str, Any]:
    return _made(tmp_path, mock_server, request.param)


def _command(made: dict[str, Any]) -> list[str]:
    """`resume` continues an interrupted run; a completed one is continued (its failed items retried) by `run`."""
    if made["status"] == "interrupted":
        return ["resume", "r1"]
    return ["run", "-s", str(made["source"]), "--run-id", "r1"]


def test_a_changed_source_is_refused_and_the_run_keeps_its_status(made: dict[str, Any]) -> None:
    before = _row(made["db"], "r1")
    with made["source"].open("a") as f:
        f.write('{"task": "Book a spin class at the gym for Friday."}\n')
    out = envscaler(*_command(made), env=made["env"])
    assert_one_line_error(out, f"run r1: {made['source']} changed since this run first read it (2 records",
                          "now 3 records", "new --run-id")
    assert _row(made["db"], "r1") == before


def test_a_moved_source_is_refused_by_resume_and_the_run_keeps_its_status(tmp_path: Path, mock_server: Any) -> None:
    """(`run` names its sources itself: a missing one is refused as not found before any store is read.)"""
    made = _made(tmp_path, mock_server, "interrupted")
    before = _row(made["db"], "r1")
    made["source"].rename(made["source"].with_name("moved.jsonl"))
    out = envscaler("resume", "r1", env=made["env"])
    assert_one_line_error(out, f"run r1: source file(s) not found: {made['source']}", "put the file back")
    assert _row(made["db"], "r1") == before
