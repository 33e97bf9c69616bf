"""Spec: with `--solve`, the last attempt's failure is the scenario's reason also when the attempt made
no call to replay (the agent made no tool call): it said "no reference solution yet" although an attempt
had been played and its failure stored (outside check F6)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from envscaler_core.interop.classify import NO_SOLUTION
from envscaler_core.models.interop import ImportedScenario
from envscaler_core.store import Store
from tests.fixtures.llm import mock_llm_settings
from tests.interop.conftest import run_import, settings_for
from tests.interop.test_checks_on_records_the_task_creates import CREATED, ENV


def test_an_attempt_without_calls_is_the_scenarios_reason(tmp_path: Path, sandbox_pool: Any, mock_server: Any) -> None:
    directory = tmp_path / "envscaler"
    directory.mkdir()
    (directory / "env_metadata.json").write_text(json.dumps({"env_hotel": ENV}))
    (directory / "rl_scenario_metadata.json").write_text(json.dumps([{
        "env_id": "env_hotel", "env_class_name": "HotelDesk", "task_id": "t1",
        "init_config": {"hotel": {"reservations": {}}}, "task": "Reserve a room for Ana.", "checklist": ["reserved"],
        "checklist_with_func": [{"check_item": "reserved", "check_func": CREATED}]}]))
    (directory / "sft_scenario_metadata.json").write_text("[]")
    settings = settings_for(tmp_path, llm=mock_llm_settings(mock_server.base_url).model_dump(mode="json"))
    run_import(directory, settings, sandbox_pool, run_id="solve-reason", solve=True, attempts=1)
    with Store.from_url(settings.store.url) as store:
        [scenario] = store.query(ImportedScenario, run_id="solve-reason")
    assert scenario.audit == "unproven" and len(scenario.attempts) == 1, scenario
    [attempt] = scenario.attempts
    assert scenario.reasons == [attempt.removeprefix("agent: ")] and NO_SOLUTION not in scenario.reasons
