"""Which trajectories are good enough to keep (for SFT export), with a reason for each drop.

The reference filter rejected everything (§8.17); here each criterion is explicit config.
"""

from __future__ import annotations

from envscaler_core.config import RolloutSettings
from envscaler_core.models.trajectory import Trajectory


def drop_reasons(traj: Trajectory, cfg: RolloutSettings) -> list[str]:
    reasons = []
    if traj.termination == "error":
        reasons.append("episode ended in an error" + (f": {traj.error}" if traj.error else ""))
    if traj.termination == "tool_raised":  # whatever require_all_passed says: the env broke, never SFT data
        reasons.append("a tool call ended the episode with reward 0" + (f": {traj.error}" if traj.error else ""))
    if traj.unrun_calls:  # whatever max_tool_errors says: the row would show them after the done signal
        reasons.append(f"{traj.unrun_calls} call(s) after the one that ended the episode were not run")
    if cfg.require_all_passed and not traj.all_passed:
        reasons.append(f"not all checks passed (reward {traj.reward})")
    if cfg.max_tool_errors is not None and traj.tool_errors > cfg.max_tool_errors:
        reasons.append(f"{traj.tool_errors} tool errors > {cfg.max_tool_errors}")
    if traj.steps < cfg.min_steps:
        reasons.append(f"{traj.steps} steps < min_steps {cfg.min_steps}")
    if cfg.drop_collateral_changes and traj.collateral_changes:  # checks test the wanted changes only (rt9-A F3)
        reasons.append(f"collateral_changes: {traj.collateral_changes} state changes outside what the task's "
                       "reference solution changes")
    if traj.termination == "max_steps":
        reasons.append(f"hit max_steps ({traj.steps}) without finishing")
    return reasons


def filter_trajectories(
    trajs: list[Trajectory], cfg: RolloutSettings
) -> tuple[list[Trajectory], list[tuple[Trajectory, list[str]]]]:
    """Split into (kept, [(dropped, reasons)]) by `cfg`'s criteria."""
    kept, dropped = [], []
    for t in trajs:
        reasons = drop_reasons(t, cfg)
        if reasons:
            dropped.append((t, reasons))
        else:
            kept.append(t)
    return kept, dropped
