"""Stage 5: rollouts of agents in verified scenarios (see docs/scenarios_and_rollouts.md)."""

from envscaler_core.rollout.agents import (
    Agent, AgentTurn, LLMAgent, ScriptedAgent, do_nothing_agent, replay_agent, system_text, usage_of,
)
from envscaler_core.rollout.filters import drop_reasons, filter_trajectories
from envscaler_core.rollout.loop import observation, run_rollout

__all__ = [
    "Agent", "AgentTurn", "LLMAgent", "ScriptedAgent", "do_nothing_agent", "drop_reasons", "filter_trajectories",
    "observation", "replay_agent", "run_rollout", "system_text", "usage_of",
]
