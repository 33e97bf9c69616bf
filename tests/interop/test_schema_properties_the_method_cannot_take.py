"""Spec: tool schemas that offer what the method cannot take, or say `"parameters": null`, are fitted to the
method, as EnvScaler's runtime runs the method and not the schema (differential re-check 2026-11-26, F4/F5).

A property the method does not take (no `**kwargs`) is removed from `properties` and `required`, with a
note: listed as required it made the tool uncallable here and rejected the env ("coverage: book_slot was
never called"), where EnvScaler plays it. `"parameters": null` is read as no `parameters` (fitted from the
signature, with a note); it skipped the env and its scenarios as malformed. Under an imported env's rules a
call is judged by the method's signature: leaving such a property out runs, giving it ends the episode at 0.

Expected values are EnvScaler's own: its runtime (`EnvScalerNonConvRLEnv`) was run by hand on these files,
each plan followed by chat_with_user "Task Completed": book_slot(slot_id="s1") 1.0; get_slot(slot_id="s1")
then book_slot(slot_id="s1") 1.0; cancel_slot(slot_id="s1", reason="rain") 1.0 on the second scenario;
book_slot(slot_id="s1", confirm=True) "TypeError: ... unexpected keyword argument 'confirm'", terminated, 0.0."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from envscaler_core.config import Settings
from envscaler_core.models import AcceptedEnv, Scenario, ToolCall
from envscaler_core.models.interop import ImportedEnv, ImportedScenario
from envscaler_core.rollout import ScriptedAgent, run_rollout
from envscaler_core.store import Store
from tests.interop.conftest import run_import, settings_for, write_scenarios_dir

CODE = '''class SchEnv:
    def __init__(self, config):
        self.slots = config.get("slots", {})

    def get_slot(self, slot_id: str) -> dict:
        """Get slot."""
        s = self.slots.get(slot_id)
        if s is None:
            return {"success": False, "error": "no such slot"}
        return {"success": True, "data": s}

    def book_slot(self, slot_id: str) -> dict:
        """Book slot."""
        s = self.slots.get(slot_id)
        if s is None:
            return {"success": False, "error": "no such slot"}
        if s.get("booked"):
            return {"success": False, "error": "booked"}
        s["booked"] = True
        return {"success": True}

    def cancel_slot(self, slot_id: str, reason="none") -> dict:
        """Cancel slot."""
        s = self.slots.get(slot_id)
        if s is None or not s.get("booked"):
            return {"success": False, "error": "not booked"}
        s["booked"] = False
        s["reason"] = reason
        return {"success": True}
'''
S = {"type": "string"}


def _tool(name: str, params: Any) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "description": name, "parameters": params}}


ENV = {
    "env_id": "env_sch", "environment_summary": "Slots", "environment_introduction": "Slots.",
    "state_space_definition": [], "constraints_rules": [], "env_class_name": "SchEnv", "env_class_code": CODE,
    "operation_list": [{"operation_name": n, "operation_type": t, "operation_description": n} for n, t in
                       [("get_slot", "query"), ("book_slot", "state_change"), ("cancel_slot", "state_change")]],
    "tools": [_tool("get_slot", {"type": "object", "properties": {"slot_id": S, "verbose": {"type": "boolean"}},
                                 "required": ["slot_id", "verbose"]}),
              _tool("book_slot", {"type": "object", "properties": {"slot_id": S, "confirm": {"type": "boolean"}},
                                  "required": ["slot_id", "confirm"]}),
              _tool("cancel_slot", None)],
}


def _scenario(task_id: str, slots: dict[str, Any], task: str, check: str) -> dict[str, Any]:
    return {"env_id": "env_sch", "env_class_name": "SchEnv", "task_id": task_id, "init_config": {"slots": slots},
            "task": task, "checklist": [task], "checklist_with_func": [{"check_func": check}]}


BOOK = _scenario("S1", {"s1": {"booked": False}}, "Book slot s1.",
                 "def check_func(final_state):\n    return final_state['slots']['s1']['booked'] is True")
CANCEL = _scenario("S2", {"s1": {"booked": True}}, "Cancel slot s1 because of rain.",
                   "def check_func(final_state):\n    s = final_state['slots']['s1']\n"
                   "    return s['booked'] is False and s['reason'] == 'rain'")
PLANS = {"S1": [{"name": "book_slot", "arguments": {"slot_id": "s1"}}],
         "S2": [{"name": "cancel_slot", "arguments": {"slot_id": "s1", "reason": "rain"}}]}


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory, sandbox_pool: Any) -> dict[str, Any]:
    tmp: Path = tmp_path_factory.mktemp("schema-fit")
    directory = write_scenarios_dir(tmp / "envscaler", "env_sch", ENV, [BOOK, CANCEL], PLANS)
    settings = settings_for(tmp)
    report = run_import(directory, settings, sandbox_pool, run_id="sch")
    with Store.from_url(settings.store.url) as store:
        return {"report": report, "envs": store.query(ImportedEnv, run_id="sch"),
                "scenarios": store.query(ImportedScenario, run_id="sch"),
                "accepted": store.query(AcceptedEnv, run_id="sch"),
                "promoted": store.query(Scenario, run_id="sch"), "pool": sandbox_pool}


def _params(imported: dict[str, Any], tool: str) -> dict[str, Any]:
    return next(t.function.parameters for t in imported["accepted"][0].tools if t.function.name == tool)


def test_the_env_is_accepted_and_both_scenarios_verified(imported: dict[str, Any]) -> None:
    assert [(e.status, e.reasons) for e in imported["envs"]] == [("accepted", [])]
    assert sorted((s.audit, tuple(s.reasons)) for s in imported["scenarios"]) == [("verified", ()), ("verified", ())]


def test_a_property_the_method_cannot_take_is_removed_from_properties_and_required(imported: dict[str, Any]) -> None:
    assert _params(imported, "book_slot") == {"type": "object", "properties": {"slot_id": S}, "required": ["slot_id"]}
    assert _params(imported, "get_slot") == {"type": "object", "properties": {"slot_id": S}, "required": ["slot_id"]}


def test_null_parameters_are_fitted_from_the_signature(imported: dict[str, Any]) -> None:
    assert _params(imported, "cancel_slot") == {"type": "object", "properties": {"slot_id": S, "reason": {}},
                                                "required": ["slot_id"]}


def test_the_notes_name_env_tool_and_property(imported: dict[str, Any]) -> None:
    notes = imported["report"].notes
    assert any(n.startswith("env_metadata.json[env_sch]: 2 schema propert(ies) the method cannot take removed "
                            "(get_slot.verbose, book_slot.confirm): EnvScaler's runtime offers them, and a call "
                            "giving one raises TypeError there") for n in notes), notes
    assert any(n.startswith("env_metadata.json[env_sch]: tools[2] (cancel_slot): 'parameters' is null, read as no "
                            "parameters") for n in notes), notes


def _roll(imported: dict[str, Any], task_id: str, plan: list[tuple[str, dict[str, Any]]],
          env: AcceptedEnv | None = None) -> Any:
    scenario = next(s for s in imported["promoted"] if s.task.startswith("Book" if task_id == "S1" else "Cancel"))
    agent = ScriptedAgent([ToolCall(tool=t, args=a) for t, a in plan])
    return asyncio.run(run_rollout(env or imported["accepted"][0], scenario, imported["pool"], None, Settings(),
                                   agent=agent))


def test_calls_leaving_the_property_out_earn_what_envscaler_gives(imported: dict[str, Any]) -> None:
    assert _roll(imported, "S1", [("get_slot", {"slot_id": "s1"}), ("book_slot", {"slot_id": "s1"})]).reward == 1.0
    assert _roll(imported, "S2", [("cancel_slot", {"slot_id": "s1", "reason": "rain"})]).reward == 1.0


def test_a_call_giving_the_property_ends_at_zero(imported: dict[str, Any]) -> None:
    traj = _roll(imported, "S1", [("book_slot", {"slot_id": "s1", "confirm": True})])
    assert traj.termination == "tool_raised" and traj.reward == 0.0 and "'confirm'" in traj.error


def test_missing_arguments_are_judged_by_the_signature_not_the_schema(imported: dict[str, Any]) -> None:
    """A schema as EnvScaler wrote it (stored before this fit) does not make the episode end as a TypeError."""
    env: AcceptedEnv = imported["accepted"][0]
    as_written = [t.model_copy(update={"function": t.function.model_copy(update={"parameters": {
        "type": "object", "properties": {"slot_id": S, "confirm": {"type": "boolean"}},
        "required": ["slot_id", "confirm"]}})}) if t.function.name == "book_slot" else t for t in env.tools]
    traj = _roll(imported, "S1", [("book_slot", {"slot_id": "s1"})], env.model_copy(update={"tools": as_written}))
    assert traj.termination == "agent_done", "EnvScaler's runtime runs book_slot(slot_id='s1'): no TypeError"
    assert "EnvScaler's runtime raises TypeError" not in traj.messages[3]["content"]
