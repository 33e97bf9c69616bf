"""Spec: collateral changes in lists, and over-acts undone before the end (outside check rt10-A, F2, F3).

F2: a reference solution removing E1 from a queue [E1, E2, E3, E4] shifted every later entry, and lists
compared index by index put `/queue/0/*` .. `/queue/3` in the footprint: an agent that also handed E2-E4 to
"mallory", or deleted E3 and appended X9, had 0 collateral changes and became SFT data. List elements are
now named by content (a record by its id-like key, `[id="E2"]`), so a removal claims the element it
removes, not the ones it shifts. F3: an agent that paused other patients' reminders and resumed them
before it ended had 0 collateral changes: collateral is every path any call changed, not the net change."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from envscaler_core.config import Settings
from envscaler_core.models.env import AcceptedEnv, ToolFunction, ToolSchema
from envscaler_core.models.scenario import CheckSpec, Scenario, ToolCall
from envscaler_core.rollout import ScriptedAgent, filter_trajectories, run_rollout
from envscaler_core.scenarios import verify_scenario

QUEUE = '''
class Queue:
    def __init__(self, init_config: dict = None):
        self.queue = (init_config or {}).get("queue", [])

    def remove_entry(self, entry_id: str) -> dict:
        """Remove an entry from the queue.

        Args:
            entry_id: the entry id
        """
        for i, e in enumerate(self.queue):
            if e["id"] == entry_id:
                del self.queue[i]
                return {"success": True}
        return {"success": False, "error": "no entry " + entry_id}

    def set_owner(self, entry_id: str, owner: str) -> dict:
        """Hand a queue entry to an owner.

        Args:
            entry_id: the entry id
            owner: the new owner
        """
        for e in self.queue:
            if e["id"] == entry_id:
                e["owner"] = owner
                return {"success": True}
        return {"success": False, "error": "no entry " + entry_id}

    def add_entry(self, entry_id: str, owner: str) -> dict:
        """Append an entry to the queue.

        Args:
            entry_id: the entry id
            owner: its owner
        """
        self.queue.append({"id": entry_id, "owner": owner})
        return {"success": True}
'''
STATE = {"queue": [{"id": "E1", "owner": "ann"}, {"id": "E2", "owner": "bob"},
                   {"id": "E3", "owner": "cy"}, {"id": "E4", "owner": "dee"}]}
GONE = CheckSpec(item="E1 is removed", code=(
    "def check_func(final_state):\n    return all(e['id'] != 'E1' for e in final_state['queue'])\n"))
REMOVE_E1 = ToolCall(tool="remove_entry", args={"entry_id": "E1"})


def _call(tool: str, **args: str) -> ToolCall:
    return ToolCall(tool=tool, args=args)


def _tool(name: str, *props: str) -> ToolSchema:
    return ToolSchema(function=ToolFunction(name=name, description=name.replace("_", " "), parameters={
        "type": "object", "properties": {p: {"type": "string"} for p in props}, "required": list(props)}))


def queue_env() -> AcceptedEnv:
    return AcceptedEnv(
        env_id="env_queue", candidate_fp="1" * 64, summary="A work queue.", introduction="Entries and owners.",
        rules=[], class_name="Queue", class_code=QUEUE,
        tools=[_tool("remove_entry", "entry_id"), _tool("set_owner", "entry_id", "owner"),
               _tool("add_entry", "entry_id", "owner")],
        tool_kinds={"remove_entry": "state_change", "set_owner": "state_change", "add_entry": "state_change"},
        score=1.0, validation_mode="programmatic")


SCENARIO = Scenario(env_id="env_queue", initial_state=STATE, task="Remove entry E1 from the queue.",
                    checklist=[GONE.item], checks=[GONE], reference_solution=[REMOVE_E1])


@pytest.fixture(scope="module")
def verified(sandbox_pool: Any) -> Scenario:
    report = verify_scenario(SCENARIO, queue_env(), sandbox_pool, 2.0)
    assert report.ok, report.reason
    return SCENARIO.model_copy(update={"status": "verified", "footprint": report.footprint})


def roll(runtime: Any, scenario: Scenario, calls: list[ToolCall]) -> Any:
    agent = ScriptedAgent(calls, per_message=len(calls), name="scripted")
    return asyncio.run(run_rollout(queue_env(), scenario, runtime, None, Settings(), agent=agent))


def test_removing_a_list_record_puts_only_that_record_in_the_footprint(verified: Scenario) -> None:
    assert verified.footprint == ['/queue/[id="E1"]']


def test_the_records_a_removal_shifts_are_not_covered_by_it(sandbox_pool: Any, verified: Scenario) -> None:
    traj = roll(sandbox_pool, verified, [REMOVE_E1] + [_call("set_owner", entry_id=e, owner="mallory")
                                                      for e in ("E2", "E3", "E4")])
    assert traj.all_passed and traj.collateral_changes == 3
    assert traj.collateral_paths == ['/queue/[id="E2"]/owner', '/queue/[id="E3"]/owner', '/queue/[id="E4"]/owner']
    assert filter_trajectories([traj], Settings().rollout)[0] == []


def test_another_removal_and_an_append_are_collateral(sandbox_pool: Any, verified: Scenario) -> None:
    traj = roll(sandbox_pool, verified, [REMOVE_E1, _call("remove_entry", entry_id="E3"),
                                         _call("add_entry", entry_id="X9", owner="mallory")])
    assert traj.all_passed and traj.collateral_paths == ['/queue/[id="E3"]', '/queue/[id="X9"]']


def test_the_reference_solution_removing_a_list_record_is_kept(sandbox_pool: Any, verified: Scenario) -> None:
    traj = roll(sandbox_pool, verified, [REMOVE_E1])
    assert traj.all_passed and traj.collateral_changes == 0
    assert filter_trajectories([traj], Settings().rollout)[0] == [traj]


def test_a_change_undone_before_the_end_is_still_collateral(sandbox_pool: Any, verified: Scenario) -> None:
    traj = roll(sandbox_pool, verified, [_call("set_owner", entry_id="E2", owner="mallory"), REMOVE_E1,
                                         _call("set_owner", entry_id="E2", owner="bob")])
    assert traj.final_state == {"queue": STATE["queue"][1:]}
    assert traj.all_passed and traj.collateral_paths == ['/queue/[id="E2"]/owner']
    assert filter_trajectories([traj], Settings().rollout)[0] == []


def test_the_footprint_is_every_path_the_reference_solutions_calls_changed(sandbox_pool: Any) -> None:
    """A reference that hands E2 over and back changed E2's owner: an agent doing the same is not collateral."""
    plan = [_call("set_owner", entry_id="E2", owner="zed"), REMOVE_E1, _call("set_owner", entry_id="E2", owner="bob")]
    report = verify_scenario(SCENARIO.model_copy(update={"reference_solution": plan}), queue_env(), sandbox_pool, 2.0)
    assert report.ok and report.footprint == ['/queue/[id="E1"]', '/queue/[id="E2"]/owner']


def test_a_footprint_recorded_with_list_indices_is_derived_again(sandbox_pool: Any, verified: Scenario) -> None:
    """Footprints recorded before list elements were named by content (`/queue/0`..`/queue/3` for E1's
    removal) name no element as a trajectory now does: the reference solution is replayed for a footprint,
    so the honest trajectory is kept and the over-act still counted."""
    legacy = verified.model_copy(update={"footprint": ["/queue/0", "/queue/1/id", "/queue/1/owner", "/queue/3"]})
    assert roll(sandbox_pool, legacy, [REMOVE_E1]).collateral_changes == 0
    traj = roll(sandbox_pool, legacy, [REMOVE_E1, _call("set_owner", entry_id="E2", owner="mallory")])
    assert traj.collateral_paths == ['/queue/[id="E2"]/owner']
