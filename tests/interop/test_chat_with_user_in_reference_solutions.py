"""Spec: a reference solution's `chat_with_user` call is replayed as EnvScaler's runtime takes it
(`check_vaild_action`, then `is_action_terminated`): without `content` it is an invalid action and the
replay goes on; with content its runtime crashes on (a number) the solution proves nothing and says so
(interop re-check, F3: the first ended the replay, so a solution EnvScaler scores 1.0 stayed unproven with
a reason that called the later, accepted calls unaccepted; the second was verified and promoted)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from envscaler_core.models import Scenario
from envscaler_core.models.interop import ImportedScenario
from envscaler_core.store import Store
from tests.interop.conftest import run_import, settings_for, write_solutions
from tests.interop.test_reserved_tool_names import ENV, NOTED

NOTE = {"name": "add_note", "arguments": {"text": "done"}}
PLANS = {
    "no_content_first": [{"name": "chat_with_user", "arguments": {}}, NOTE],
    "int_content_after": [NOTE, {"name": "chat_with_user", "arguments": {"content": 5}}],
    "ends_first": [{"name": "chat_with_user", "arguments": {"content": "Task Completed"}}, NOTE],
}


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory, sandbox_pool: Any) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("chat-in-solutions")
    directory = tmp / "envscaler"
    directory.mkdir()
    (directory / "env_metadata.json").write_text(json.dumps({"env_inbox": ENV}))
    scenarios = [{"env_id": "env_inbox", "env_class_name": "InboxDesk", "task_id": tid,
                  "init_config": {"messages": [], "notes": []}, "task": f"Task {tid}.", "checklist": [tid],
                  "checklist_with_func": [{"check_item": tid, "check_func": NOTED}]} for tid in PLANS]
    (directory / "rl_scenario_metadata.json").write_text(json.dumps(scenarios))
    (directory / "sft_scenario_metadata.json").write_text("[]")
    write_solutions(directory, PLANS)
    settings = settings_for(tmp)
    run_import(directory, settings, sandbox_pool, run_id="chat")
    with Store.from_url(settings.store.url) as store:
        return {"scenarios": {s.task_id: s for s in store.query(ImportedScenario, run_id="chat")},
                "promoted": store.query(Scenario, run_id="chat", where={"status": "verified"})}


def test_a_message_without_content_is_skipped_as_invalid_and_the_replay_goes_on(imported: dict[str, Any]) -> None:
    scenario = imported["scenarios"]["no_content_first"]
    assert scenario.audit == "verified", scenario.reasons
    assert [c.tool for c in scenario.reference_solution] == ["add_note"]


def test_content_envscalers_runtime_crashes_on_proves_nothing_and_says_so(imported: dict[str, Any]) -> None:
    scenario = imported["scenarios"]["int_content_after"]
    assert scenario.audit == "unproven"
    [reason] = scenario.reasons
    assert "crashes EnvScaler's runtime" in reason and "5 (int)" in reason, reason


def test_a_message_first_ends_the_episode_and_the_reason_says_so(imported: dict[str, Any]) -> None:
    scenario = imported["scenarios"]["ends_first"]
    assert scenario.audit == "unproven"
    [reason] = scenario.reasons
    assert "call 1 of 2" in reason and "ends the episode" in reason and "no call" not in reason, reason


def test_only_the_solution_envscaler_rewards_is_promoted(imported: dict[str, Any]) -> None:
    assert [s.task for s in imported["promoted"]] == ["Task no_content_first."]
