"""Spec: a tool call EnvScaler's runtime would execute is not refused because of what EnvScaler's step6
could not express in the tool list, and the list offered to agents holds only tools that can succeed.

EnvScaler's step6 lists every parameter as required (also `days: int = 7`), writes a placeholder
`{"type": "object"}` for `list[str]`, `Union[int, str]`, `X | None`, ..., and makes every `_helper` a
tool; its runtime calls `getattr(env, name)(**arguments)` without checking anything. Imported, the
tools follow the method's real signature: a defaulted parameter is optional (and takes null when its
default is None), a placeholder takes the
annotation's type (one for a mapping stays an object), and private helpers are left out (their calls
are still refused). Every consumer reads that one list: validation, gym, MCP, rollouts, exports."""

from __future__ import annotations

import json
from typing import Any

import pytest

from envscaler_core.gym import ScenarioEnv
from envscaler_core.models import AcceptedEnv, Scenario
from envscaler_core.models.interop import ImportedEnv, ImportedScenario
from envscaler_core.store import Store
from tests.interop.conftest import run_import, settings_for, write_one_scenario_dir

CODE = '''from typing import Any, Dict, List, Optional, Union


class LendingDesk:
    def __init__(self, init_config: dict):
        self.items: Dict[str, Dict[str, Any]] = {}
        self.loans: List[Dict[str, Any]] = []

    def _today(self) -> str:
        return "2025-03-01"

    def _item(self, item_id: str) -> Optional[dict]:
        return self.items.get(item_id)

    def lend(self, item_id: str, member: str, days: int = 7, note: str = None) -> dict:
        """
        Lend an item to a member.

        Args:
            item_id (str): The item.
            member (str): Who borrows it.
            days (int): Loan length in days; 7 when left out.
            note (str): A note on the loan, if any.

        Returns:
            dict: {"success": True, "message": str} or {"success": False, "error": str}
        """
        item = self._item(item_id)
        if item is None or item["lent"]:
            return {"success": False, "error": "not available"}
        item["lent"] = True
        self.loans.append({"item_id": item_id, "member": member, "days": days, "note": note, "from": self._today()})
        return {"success": True, "message": f"{item_id} lent for {days} days"}

    def retag(self, item_id: str, labels: list[str]) -> dict:
        """
        Replace an item's labels.

        Args:
            item_id (str): The item.
            labels (list[str]): The new labels.

        Returns:
            dict: {"success": True, "message": str} or {"success": False, "error": str}
        """
        item = self._item(item_id)
        if item is None or not all(isinstance(l, str) for l in labels):
            return {"success": False, "error": "bad item or labels"}
        item["labels"] = list(labels)
        return {"success": True, "message": "retagged"}

    def set_shelf(self, item_id: str, shelf: Union[int, str]) -> dict:
        """
        Move an item to a shelf, by number or by name.

        Args:
            item_id (str): The item.
            shelf (Union[int, str]): Shelf number, or a name such as "reserve".

        Returns:
            dict: {"success": True, "message": str} or {"success": False, "error": str}
        """
        item = self._item(item_id)
        if item is None:
            return {"success": False, "error": "no such item"}
        item["shelf"] = shelf
        return {"success": True, "message": "moved"}

    def annotate(self, item_id: str, note: Dict[str, str]) -> dict:
        """
        Attach a note to an item.

        Args:
            item_id (str): The item.
            note (Dict[str, str]): The note's fields.

        Returns:
            dict: {"success": True, "message": str} or {"success": False, "error": str}
        """
        item = self._item(item_id)
        if item is None or not isinstance(note, dict):
            return {"success": False, "error": "bad item or note"}
        item["note"] = dict(note)
        return {"success": True, "message": "noted"}
'''


def step6(name: str, params: dict[str, Any]) -> dict[str, Any]:
    """A tool as EnvScaler's step6 writes it: every parameter required, placeholders kept."""
    return {"type": "function", "function": {"name": name, "description": name, "parameters": {
        "type": "object", "properties": params, "required": list(params)}}}


OBJECT = {"type": "object"}
TOOLS = [step6("_today", {}), step6("_item", {"item_id": {"type": "string"}}),
         step6("lend", {"item_id": {"type": "string"}, "member": {"type": "string"}, "days": {"type": "integer"},
                        "note": {"type": "string"}}),
         step6("retag", {"item_id": {"type": "string"}, "labels": OBJECT}),
         step6("set_shelf", {"item_id": {"type": "string"}, "shelf": OBJECT}),
         step6("annotate", {"item_id": {"type": "string"}, "note": OBJECT})]
OPS = [{"operation_name": n, "operation_description": n, "operation_type": "state_change"}
       for n in ("lend", "retag", "set_shelf", "annotate")]
ENV = {"env_id": "env_desk", "environment_summary": "Desk", "environment_introduction": "A lending desk.",
       "state_space_definition": [], "constraints_rules": [], "env_class_name": "LendingDesk", "env_class_code": CODE,
       "operation_list": OPS, "tools": TOOLS}
CONFIG = {"items": {"i1": {"lent": False, "labels": ["old"], "shelf": 3}, "i2": {"lent": True, "labels": [], "shelf": "a"}},
          "loans": []}
CHECKS = [("lent for a week", "def check_func(final_state):\n"
           "    return any(l['item_id'] == 'i1' and l['days'] == 7 for l in final_state['loans'])"),
          ("retagged", "def check_func(final_state):\n    return final_state['items']['i1']['labels'] == ['new', 'kids']"),
          ("on the reserve shelf", "def check_func(final_state):\n    return final_state['items']['i1']['shelf'] == 'reserve'")]
PLAN = [{"name": "lend", "arguments": {"item_id": "i1", "member": "ana", "note": None}},
        {"name": "retag", "arguments": {"item_id": "i1", "labels": ["new", "kids"]}},
        {"name": "set_shelf", "arguments": {"item_id": "i1", "shelf": "reserve"}}]


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory, sandbox_pool: Any) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("tool-fit")
    scenario = {"env_id": "env_desk", "env_class_name": "LendingDesk", "task_id": "d1", "init_config": CONFIG,
                "task": "Lend i1 to ana, relabel it 'new' and 'kids', and put it on the reserve shelf.",
                "checklist": [c for c, _ in CHECKS],
                "checklist_with_func": [{"check_item": c, "check_func": f} for c, f in CHECKS]}
    directory = write_one_scenario_dir(tmp / "envscaler", ENV, scenario, PLAN)
    settings = settings_for(tmp)
    report = run_import(directory, settings, sandbox_pool, run_id="desk")
    with Store.from_url(settings.store.url) as store:
        return {"report": report, "envs": store.query(ImportedEnv, run_id="desk"),
                "scenarios": store.query(ImportedScenario, run_id="desk"),
                "accepted": store.query(AcceptedEnv, run_id="desk"), "promoted": store.query(Scenario, run_id="desk")}


def params(imported: dict[str, Any], tool: str) -> dict[str, Any]:
    env = imported["accepted"][0]
    return next(t.function.parameters for t in env.tools if t.function.name == tool)


def test_the_env_is_accepted_and_its_scenario_verified_and_promoted(imported: dict[str, Any]) -> None:
    assert [(e.status, e.reasons) for e in imported["envs"]] == [("accepted", [])]
    assert [s.audit for s in imported["scenarios"]] == ["verified"], imported["scenarios"][0].attempts
    assert len(imported["promoted"]) == 1, imported["scenarios"][0].reasons


def test_a_parameter_with_a_default_is_not_required(imported: dict[str, Any]) -> None:
    assert params(imported, "lend")["required"] == ["item_id", "member"]


def test_a_parameter_whose_default_is_none_takes_an_explicit_null(imported: dict[str, Any]) -> None:
    """step6 writes `note: str = None` as a plain string; the plan's `note: null` (the default, which
    EnvScaler's runtime passes through) must not be refused by the promotion's replay, the gym or MCP
    (third interop check, F6)."""
    assert params(imported, "lend")["properties"]["note"] == {"type": ["string", "null"]}
    note = next(n for n in imported["report"].notes if "made nullable" in n)
    assert "1 parameter(s) whose default is None made nullable (lend.note)" in note


def test_a_placeholder_object_takes_the_annotations_type(imported: dict[str, Any]) -> None:
    assert params(imported, "retag")["properties"]["labels"] == {"type": "array", "items": {"type": "string"}}
    assert params(imported, "set_shelf")["properties"]["shelf"] == {"anyOf": [{"type": "integer"}, {"type": "string"}]}


def test_a_placeholder_object_for_a_mapping_annotation_stays_an_object(imported: dict[str, Any]) -> None:
    assert params(imported, "annotate")["properties"]["note"] == {"type": "object"}


def test_private_helpers_are_not_offered_and_the_import_says_how_many_and_why(imported: dict[str, Any]) -> None:
    assert [t.function.name for t in imported["accepted"][0].tools] == ["lend", "retag", "set_shelf", "annotate"]
    note = next(n for n in imported["report"].notes if "private helper" in n)
    assert "2 private helper(s) not offered as tools (_today, _item)" in note and "refused" in note


def test_the_verbatim_record_keeps_envscalers_own_tool_list(imported: dict[str, Any]) -> None:
    record = json.loads(imported["envs"][0].record_json)
    assert record["tools"] == TOOLS


def test_a_gym_episode_calling_as_envscaler_allows_earns_full_reward(imported: dict[str, Any], sandbox_pool: Any) -> None:
    env = ScenarioEnv(imported["accepted"][0], imported["promoted"], sandbox_pool)
    try:
        env.reset(seed=0)
        for call in PLAN:
            obs, _, _, _, _ = env.step({"tool": call["name"], "args": call["arguments"]})
            assert json.loads(obs).get("success") is True, obs
        _, reward, terminated, _, _ = env.step({"done": True})
    finally:
        env.close()
    assert terminated and reward == 1.0


def test_a_call_to_a_private_helper_is_still_refused(imported: dict[str, Any], sandbox_pool: Any) -> None:
    env = ScenarioEnv(imported["accepted"][0], imported["promoted"], sandbox_pool)
    try:
        env.reset(seed=0)
        obs, _, _, _, _ = env.step({"tool": "_today", "args": {}})
    finally:
        env.close()
    assert json.loads(obs)["error_kind"] == "schema" and "private" in json.loads(obs)["error"]
