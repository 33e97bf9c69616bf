"""Spec: a tool under a name EnvScaler's runtime reserves (`chat_with_user`, the agent's message to the
user) is treated as that runtime treats it (outside check round 4, F2: such a tool was audited
verified and promoted, and EnvScaler's runtime scored the same solution 0 because it never runs the
method). It is not offered as a tool, and a reference solution's call to it ends the replay there
without running anything: what ran before still counts, what comes after never runs."""

from __future__ import annotations

import json
from typing import Any

import pytest

from envscaler_core.models import AcceptedEnv, Scenario
from envscaler_core.models.interop import ImportedScenario
from envscaler_core.store import Store
from tests.interop.conftest import run_import, settings_for, write_solutions

CODE = '''class InboxDesk:
    def __init__(self, init_config: dict):
        self.messages = []
        self.notes = []

    def add_note(self, text: str) -> dict:
        """
        Keep a note.

        Args:
            text (str): the note

        Returns:
            dict: {"success": True, "message": str}
        """
        self.notes.append(text)
        return {"success": True, "message": "noted"}

    def chat_with_user(self, content: str) -> dict:
        """
        Send the customer a message and keep it in the outbox.

        Args:
            content (str): message text

        Returns:
            dict: {"success": True, "message": str}
        """
        self.messages.append(content)
        return {"success": True, "message": "sent"}
'''


def _tool(name: str, arg: str) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "description": name, "parameters": {
        "type": "object", "properties": {arg: {"type": "string"}}, "required": [arg]}}}


ENV = {"env_id": "env_inbox", "environment_summary": "Inbox", "environment_introduction": "An inbox.",
       "state_space_definition": [], "constraints_rules": [], "env_class_name": "InboxDesk", "env_class_code": CODE,
       "operation_list": [{"operation_name": "add_note", "operation_description": "Note.", "operation_type": "state_change"},
                          {"operation_name": "chat_with_user", "operation_description": "Send.",
                           "operation_type": "state_change"}],
       "tools": [_tool("add_note", "text"), _tool("chat_with_user", "content")]}
SENT = "def check_func(final_state):\n    return 'Your order shipped' in final_state['messages']"
NOTED = "def check_func(final_state):\n    return 'done' in final_state['notes']"
PLANS = {
    "sent": [{"name": "chat_with_user", "arguments": {"content": "Your order shipped"}}],
    "note_after": [{"name": "chat_with_user", "arguments": {"content": "Task Completed"}},
                   {"name": "add_note", "arguments": {"text": "done"}}],
    "note_before": [{"name": "add_note", "arguments": {"text": "done"}},
                    {"name": "chat_with_user", "arguments": {"content": "Task Completed"}}],
}


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory, sandbox_pool: Any) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("reserved")
    directory = tmp / "envscaler"
    directory.mkdir()
    (directory / "env_metadata.json").write_text(json.dumps({"env_inbox": ENV}))
    scenarios = [{"env_id": "env_inbox", "env_class_name": "InboxDesk", "task_id": tid,
                  "init_config": {"messages": [], "notes": []}, "task": f"Task {tid}.", "checklist": [tid],
                  "checklist_with_func": [{"check_item": tid, "check_func": SENT if tid == "sent" else NOTED}]}
                 for tid in PLANS]
    (directory / "rl_scenario_metadata.json").write_text(json.dumps(scenarios))
    (directory / "sft_scenario_metadata.json").write_text("[]")
    write_solutions(directory, PLANS)
    settings = settings_for(tmp)
    report = run_import(directory, settings, sandbox_pool, run_id="reserved")
    with Store.from_url(settings.store.url) as store:
        return {"report": report,
                "scenarios": {s.task_id: s for s in store.query(ImportedScenario, run_id="reserved")},
                "promoted": store.query(Scenario, run_id="reserved", where={"status": "verified"}),
                "envs": store.query(AcceptedEnv, run_id="reserved")}


def test_the_reserved_name_is_not_offered_as_a_tool(imported: dict[str, Any]) -> None:
    [env] = imported["envs"]
    assert [t.function.name for t in env.tools] == ["add_note"]
    assert any("'chat_with_user' not offered" in n for n in imported["report"].notes), imported["report"].notes


def test_a_solution_that_only_calls_it_proves_nothing_and_says_why(imported: dict[str, Any]) -> None:
    sent = imported["scenarios"]["sent"]
    assert sent.audit == "unproven"
    [reason] = sent.reasons
    assert "chat_with_user" in reason and "reserves" in reason, reason


def test_a_call_after_it_never_runs(imported: dict[str, Any]) -> None:
    assert imported["scenarios"]["note_after"].audit == "unproven"


def test_what_ran_before_it_still_counts(imported: dict[str, Any]) -> None:
    assert imported["scenarios"]["note_before"].audit == "verified"


def test_only_what_envscalers_runtime_rewards_is_promoted(imported: dict[str, Any]) -> None:
    assert sorted(s.task for s in imported["promoted"]) == ["Task note_before."]
