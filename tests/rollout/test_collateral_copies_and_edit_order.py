"""Spec: equal list elements are told apart, and an element keeps its name through in-place edits (outside
check rt11-A, F2, F3).

F2: equal elements shared one content name, so a footprint that released one of M1's two identical holds
covered both: an agent releasing both, appending "cy" four times instead of once, or dropping both "ana"
instead of one had 0 collateral changes and became SFT data. Equal elements are now counted apart (the
k-th copy), so touching more copies than the reference did is collateral, and touching any one is not.
F3: a record with no id-like key was named by its content at each step, so the same end change reached in
another order or in other steps (fields one by one instead of the whole record; a nested list edited in
another order) named other paths and an honest trajectory was dropped. An element is now named by what it
was when the episode started, whatever it became on the way."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from envscaler_core.config import Settings
from envscaler_core.models.env import AcceptedEnv
from envscaler_core.models.scenario import CheckSpec, Scenario, ToolCall
from envscaler_core.rollout import ScriptedAgent, filter_trajectories, run_rollout
from envscaler_core.scenarios import verify_scenario
from tests.rollout.test_collateral_list_changes import _tool

BOARD = '''
import json

class Board:
    def __init__(self, init_config: dict = None):
        for key, value in (init_config or {}).items():
            setattr(self, key, value)

    def _node(self, parts):
        node = getattr(self, parts[0])
        for part in parts[1:]:
            node = node[int(part)] if isinstance(node, list) else node[part]
        return node

    def set_value(self, path: str, value_json: str) -> dict:
        """Set the value at a dotted path.

        Args:
            path: dotted path, list indices as numbers
            value_json: the new value as JSON text
        """
        *parents, last = path.split(".")
        node = self._node(parents)
        node[int(last) if isinstance(node, list) else last] = json.loads(value_json)
        return {"success": True}

    def remove_at(self, path: str) -> dict:
        """Remove the list element or entry at a dotted path.

        Args:
            path: dotted path, list indices as numbers
        """
        *parents, last = path.split(".")
        node = self._node(parents)
        del node[int(last) if isinstance(node, list) else last]
        return {"success": True}

    def append_to(self, path: str, value_json: str) -> dict:
        """Append a value to the list at a dotted path.

        Args:
            path: dotted path of a list
            value_json: the value as JSON text
        """
        self._node(path.split(".")).append(json.loads(value_json))
        return {"success": True}
'''
HOLD = {"member": "M1", "slot": "S1"}
STATE = {"holds": [HOLD, HOLD, {"member": "M2", "slot": "S2"}], "waitlist": ["ana", "ana", "bo"],
         "dose_log": [{"date": "2026-11-01", "reminder": "R1", "taken": False, "notes": ["a", "b"]},
                      {"date": "2026-11-02", "reminder": "R1", "taken": False, "notes": []}]}
TAKEN = {"date": "2026-11-03", "reminder": "R1", "taken": True, "notes": ["a", "b"]}


def board_env() -> AcceptedEnv:
    return AcceptedEnv(
        env_id="env_board", candidate_fp="2" * 64, summary="A board of lists.", introduction="Holds and logs.",
        rules=[], class_name="Board", class_code=BOARD,
        tools=[_tool("set_value", "path", "value_json"), _tool("remove_at", "path"), _tool("append_to", "path", "value_json")],
        tool_kinds={"set_value": "state_change", "remove_at": "state_change", "append_to": "state_change"},
        score=1.0, validation_mode="programmatic")


def set_(path: str, value: Any) -> ToolCall:
    return ToolCall(tool="set_value", args={"path": path, "value_json": json.dumps(value)})


def remove(path: str) -> ToolCall:
    return ToolCall(tool="remove_at", args={"path": path})


def append(path: str, value: Any) -> ToolCall:
    return ToolCall(tool="append_to", args={"path": path, "value_json": json.dumps(value)})


def verified(runtime: Any, plan: list[ToolCall], check: str) -> Scenario:
    spec = CheckSpec(item="done", code=f"def check_func(final_state):\n    return bool({check})\n")
    scenario = Scenario(env_id="env_board", initial_state=STATE, task="Edit the board.", checklist=[spec.item],
                        checks=[spec], reference_solution=plan)
    report = verify_scenario(scenario, board_env(), runtime, 2.0)
    assert report.ok, report.reason
    return scenario.model_copy(update={"status": "verified", "footprint": report.footprint})


def roll(runtime: Any, scenario: Scenario, calls: list[ToolCall]) -> Any:
    agent = ScriptedAgent(calls, per_message=len(calls), name="scripted")
    traj = asyncio.run(run_rollout(board_env(), scenario, runtime, None, Settings(), agent=agent))
    assert traj.all_passed
    return traj


def kept(traj: Any) -> bool:
    return filter_trajectories([traj], Settings().rollout)[0] == [traj]


@pytest.fixture(scope="module")
def release_one_hold(sandbox_pool: Any) -> Scenario:
    return verified(sandbox_pool, [remove("holds.0")], "len(final_state['holds']) < 3")


def test_releasing_both_of_two_equal_holds_when_the_task_releases_one_is_collateral(
        sandbox_pool: Any, release_one_hold: Scenario) -> None:
    traj = roll(sandbox_pool, release_one_hold, [remove("holds.0"), remove("holds.0")])
    assert traj.collateral_changes == 1 and not kept(traj)


def test_releasing_the_other_equal_copy_than_the_reference_did_is_not_collateral(
        sandbox_pool: Any, release_one_hold: Scenario) -> None:
    traj = roll(sandbox_pool, release_one_hold, [remove("holds.1")])
    assert traj.collateral_changes == 0 and kept(traj)


def test_appending_four_copies_when_the_task_appends_one_is_collateral(sandbox_pool: Any) -> None:
    scenario = verified(sandbox_pool, [append("waitlist", "cy")], "'cy' in final_state['waitlist']")
    assert roll(sandbox_pool, scenario, [append("waitlist", "cy")]).collateral_changes == 0
    assert roll(sandbox_pool, scenario, [append("waitlist", "cy")] * 4).collateral_changes == 3


def test_dropping_both_equal_names_when_the_task_drops_one_is_collateral(sandbox_pool: Any) -> None:
    scenario = verified(sandbox_pool, [remove("waitlist.0")], "len(final_state['waitlist']) < 3")
    assert roll(sandbox_pool, scenario, [remove("waitlist.1")]).collateral_changes == 0
    assert roll(sandbox_pool, scenario, [remove("waitlist.0"), remove("waitlist.0")]).collateral_changes == 1


@pytest.fixture(scope="module")
def date_then_taken(sandbox_pool: Any) -> Scenario:
    return verified(sandbox_pool, [set_("dose_log.0.date", "2026-11-03"), set_("dose_log.0.taken", True)],
                    f"final_state['dose_log'][0] == {TAKEN!r}")


def test_the_same_field_edits_in_the_other_order_are_not_collateral(
        sandbox_pool: Any, date_then_taken: Scenario) -> None:
    traj = roll(sandbox_pool, date_then_taken, [set_("dose_log.0.taken", True), set_("dose_log.0.date", "2026-11-03")])
    assert traj.collateral_changes == 0 and kept(traj)


def test_one_whole_record_call_for_the_references_field_edits_is_not_collateral(
        sandbox_pool: Any, date_then_taken: Scenario) -> None:
    traj = roll(sandbox_pool, date_then_taken, [set_("dose_log.0", TAKEN)])
    assert traj.collateral_changes == 0 and kept(traj)


def test_field_edits_for_the_references_whole_record_call_are_not_collateral(sandbox_pool: Any) -> None:
    scenario = verified(sandbox_pool, [set_("dose_log.0", TAKEN)], f"final_state['dose_log'][0] == {TAKEN!r}")
    traj = roll(sandbox_pool, scenario, [set_("dose_log.0.taken", True), set_("dose_log.0.date", "2026-11-03")])
    assert traj.collateral_changes == 0 and kept(traj)


def test_a_nested_list_edited_in_another_order_is_not_collateral(sandbox_pool: Any) -> None:
    plan = [set_("dose_log.0.notes.0", "x"), append("dose_log.0.notes", "c"), set_("dose_log.0.taken", True)]
    scenario = verified(sandbox_pool, plan, "final_state['dose_log'][0]['notes'] == ['x', 'b', 'c']")
    traj = roll(sandbox_pool, scenario, [set_("dose_log.0.taken", True), append("dose_log.0.notes", "c"),
                                         set_("dose_log.0.notes.0", "x")])
    assert traj.collateral_changes == 0 and kept(traj)


def test_an_edit_of_another_record_undone_before_the_end_is_still_collateral(
        sandbox_pool: Any, date_then_taken: Scenario) -> None:
    traj = roll(sandbox_pool, date_then_taken, [set_("dose_log.1.taken", True), set_("dose_log.0", TAKEN),
                                                set_("dose_log.1.taken", False)])
    assert traj.final_state["dose_log"][1] == STATE["dose_log"][1]
    assert traj.collateral_changes == 1 and not kept(traj)


def test_a_footprint_recorded_under_the_former_names_is_derived_again(
        sandbox_pool: Any, release_one_hold: Scenario) -> None:
    """Footprints recorded before equal elements were told apart name the first copy where one now names
    the copy a removal took: the reference solution is replayed, so the honest trajectory is kept."""
    legacy = release_one_hold.model_copy(update={"footprint": ['/holds/[{"member":"M1","slot":"S1"}]'],
                                                 "footprint_scheme": 1})
    assert roll(sandbox_pool, legacy, [remove("holds.1")]).collateral_changes == 0
    assert roll(sandbox_pool, legacy, [remove("holds.0"), remove("holds.1")]).collateral_changes == 1
