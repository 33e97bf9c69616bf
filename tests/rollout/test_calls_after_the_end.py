"""Spec: calls the agent wrote that never ran are refused calls (red team 9, F4). Calls written after the
call that ended the episode (a `chat_with_user`, or a call that raised) are answered "not run", count as
`tool_errors` and in `unrun_calls`, and such a trajectory is never SFT data, whatever the filters say: its
row would show calls after the done signal (cancel the booking just made) as if they were fine."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from envscaler_core.config import Settings
from envscaler_core.models.scenario import ToolCall
from envscaler_core.rollout import ScriptedAgent, filter_trajectories, run_rollout
from tests.scenarios.helpers import PLAN, library_env, scenario

DONE = ToolCall(tool="chat_with_user", args={"content": "Task Completed"})
UNDO = ToolCall(tool="get_book", args={"book_id": "b1"})


def _roll(runtime: Any, plan: list[ToolCall]) -> Any:
    settings = Settings.model_validate({"rollout": {"mode": "non_conversational"}})
    return asyncio.run(run_rollout(library_env(), scenario(), runtime, None, settings,
                                   agent=ScriptedAgent(plan, per_message=len(plan))))


def test_calls_after_the_message_to_the_user_count_as_tool_errors(runtime: Any) -> None:
    traj = _roll(runtime, [*PLAN, DONE, UNDO, UNDO])
    assert traj.reward == 1.0 and traj.termination == "agent_done"
    assert traj.tool_errors == 2 and traj.unrun_calls == 2
    assert [json.loads(m["content"]).get("error_kind") for m in traj.messages[-2:]] == ["action", "action"]


def test_a_trajectory_with_calls_after_the_end_is_never_sft_data(runtime: Any) -> None:
    traj = _roll(runtime, [*PLAN, DONE, UNDO])
    kept, dropped = filter_trajectories([traj], Settings().rollout)  # defaults: no tool-error bound
    assert not kept and any("not run" in reason for reason in dropped[0][1])


def test_a_message_ending_with_its_done_signal_stays_sft_data(runtime: Any) -> None:
    traj = _roll(runtime, [*PLAN, DONE])
    kept, _ = filter_trajectories([traj], Settings().rollout.model_copy(update={"max_tool_errors": 0}))
    assert traj.tool_errors == 0 and traj.unrun_calls == 0 and kept == [traj]
