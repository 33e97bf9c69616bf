"""Spec: the factory flow (what a deployment runs) records its sources by absolute path, and refuses a
missing source before anything is written.

A deployment passes the relative default source, taken in the worker's ENVSCALER_HOME (the flow's
working directory). The run used to record it as given, so `envscaler resume` from any other directory
said the file was gone; and a new run whose source did not exist was written as a `failed` run whose
error told the user to "put the file back" although the run had never read it.
"""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path
from typing import Any

import pytest

from envscaler_core.pipeline.stages import SourceError
from envscaler_core.store import Store
from flows.factory import factory_flow
from tests.flows.test_factory import SLICE, small_settings

pytestmark = [pytest.mark.prefect]


@pytest.fixture
def checkout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, prefect_api: str) -> Path:
    """The worker's ENVSCALER_HOME, which is the flow's working directory, holding one task file."""
    home = tmp_path / "checkout"
    (home / "data").mkdir(parents=True)
    shutil.copy(SLICE, home / "data" / "tasks.json")
    monkeypatch.chdir(home)
    return home


def _run_row(config: dict[str, Any], run_id: str) -> Any:
    store = Store.from_url(config["store"]["url"])
    try:
        return store.get_run(run_id)
    finally:
        store.close()


def test_a_relative_source_is_recorded_by_its_absolute_path(checkout: Path, tmp_path: Path, mock_server: Any) -> None:
    config = small_settings(tmp_path, mock_server)
    asyncio.run(factory_flow(run_id="rel", sources=["data/tasks.json"], config=config, stages=["mine"]))
    run = _run_row(config, "rel")
    absolute = str(checkout / "data" / "tasks.json")
    assert run.sources == [absolute]
    assert [f.path for f in run.sources_report.files] == [absolute]


def test_a_new_run_with_a_missing_source_fails_before_any_row_naming_the_directory(
        checkout: Path, tmp_path: Path, mock_server: Any) -> None:
    config = small_settings(tmp_path, mock_server)
    with pytest.raises(SourceError) as raised:
        asyncio.run(factory_flow(run_id="badD", sources=["nope/missing.json"], config=config))
    message = str(raised.value)
    assert "source file(s) not found: nope/missing.json" in message and str(checkout) in message, message
    assert "put the file back" not in message, message  # the run never read it
    assert _run_row(config, "badD") is None
