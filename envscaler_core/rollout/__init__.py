"""Stage 5: rollouts of agents in verified scenarios (see docs/scenarios_and_rollouts.md)."""

from envscaler_core.rollout.agents import (
    Agent, AgentTurn, LLMAgent, ScriptedAgent, do_nothing_agent, replay_agent, system_text, usage_of,
)
from envscaler_core.rollout.filters import drop_reasons, filter_trajectories
from envscaler_core.rollout.loop import run_rollout
from envscaler_core.rollout.rules import CallRules, Observed

__all__ = [
    "Agent", "AgentTurn", "CallRules", "LLMAgent", "Observed", "ScriptedAgent", "do_nothing_agent", "drop_reasons",
    "filter_trajectories", "replay_agent", "run_rollout", "system_text", "usage_of",
]
