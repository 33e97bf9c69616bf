"""Spec: trajectory filters keep or drop by configured criteria and always say why."""

from __future__ import annotations

from envscaler_core.config import RolloutSettings
from envscaler_core.models.trajectory import Trajectory
from envscaler_core.rollout import filter_trajectories


def traj(**kw) -> Trajectory:
    base = dict(scenario_fp="s", env_id="e", mode="non_conversational", agent_model="m", messages=[], tools=[],
                steps=3, tool_errors=0, termination="agent_done", reward=1.0, all_passed=True)
    return Trajectory(**{**base, **kw})


def test_by_default_only_trajectories_whose_checks_all_passed_are_sft_data():
    """Imitating a failed episode teaches the failure (an outside check found reward-0 trajectories, a
    lost tool call among them, in the default SFT export)."""
    kept, dropped = filter_trajectories([traj(), traj(reward=0.5, all_passed=False)], RolloutSettings())
    assert len(kept) == 1 and "not all checks passed" in dropped[0][1][0]


def test_partial_successes_are_kept_when_asked_for():
    kept, dropped = filter_trajectories([traj(reward=0.5, all_passed=False)], RolloutSettings(require_all_passed=False))
    assert len(kept) == 1 and dropped == []


def test_require_all_passed_drops_partial_success():
    kept, dropped = filter_trajectories([traj(), traj(reward=0.5, all_passed=False)],
                                        RolloutSettings(require_all_passed=True))
    assert len(kept) == 1 and "not all checks passed" in dropped[0][1][0]


def test_tool_error_bound():
    kept, dropped = filter_trajectories([traj(tool_errors=1), traj(tool_errors=2)], RolloutSettings(max_tool_errors=1))
    assert [t.tool_errors for t in kept] == [1] and "2 tool errors" in dropped[0][1][0]


def test_min_steps_bound():
    _, dropped = filter_trajectories([traj(steps=1)], RolloutSettings(min_steps=2))
    assert "min_steps" in dropped[0][1][0]


def test_truncated_and_errored_episodes_are_dropped_with_all_reasons():
    _, dropped = filter_trajectories(
        [traj(termination="max_steps"), traj(termination="error", reward=0.0, all_passed=False)],
        RolloutSettings(require_all_passed=True),
    )
    assert "max_steps" in dropped[0][1][0]
    assert len(dropped[1][1]) == 2
