"""Rollout records: one agent episode in an environment, with its reward."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field

from envscaler_core.models.base import Model, Record
from envscaler_core.models.env import ToolSchema


class CheckResult(Model):
    """`passed=None` means the check could not be scored (it crashed or returned a non-bool):
    not scored is not the same as failed."""

    item: str
    passed: bool | None
    error: str | None = None


class TokenUsage(Model):
    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


TerminationReason = Literal["agent_done", "user_stop", "max_steps", "error", "tool_raised"]
"""`tool_raised`: a tool's method raised, or the env's process died or timed out in a call, or (an imported env)
the call is one EnvScaler's runtime runs into a TypeError: the episode ended there with reward 0, as in
EnvScaler's runtime (`rollout/rules.py`)."""


class Trajectory(Record):
    """An episode: the OpenAI-format messages, tools, states, per-check results and reward."""

    fingerprint_fields: ClassVar[tuple[str, ...]] = ("scenario_fp", "mode", "agent_model", "sample")

    scenario_fp: str
    env_id: str
    mode: Literal["non_conversational", "conversational"]
    agent_model: str
    sample: int = Field(default=0, description="Index when several rollouts share a scenario.")
    messages: list[dict[str, Any]]
    tools: list[ToolSchema]
    steps: int = 0
    tool_errors: int = 0
    termination: TerminationReason
    initial_state: dict[str, Any] = Field(default_factory=dict)
    final_state: dict[str, Any] = Field(default_factory=dict)
    check_results: list[CheckResult] = Field(default_factory=list)
    reward: float = Field(ge=0.0, le=1.0)
    all_passed: bool
    usage: TokenUsage = Field(default_factory=TokenUsage)
    dropped_calls: int = Field(
        default=0, ge=0,
        description="Tool calls not run because the env plays EnvScaler's rules, whose runtime runs only the first "
        "call of an assistant message: the recorded message keeps that one call, so each call id has one answer. "
        "They are refused calls, so counted in `tool_errors` too.")
    unrun_calls: int = Field(
        default=0, ge=0,
        description="Tool calls of the last assistant message written after the call that ended the episode (a "
        "chat_with_user, a call that raised): answered 'not run' and counted in `tool_errors`. A trajectory with "
        "any is never SFT data (its row would show calls after the done signal as if they were fine).")
    collateral_changes: int | None = Field(
        default=None, ge=0,
        description="Paths any call changed (undone later or not) outside the task's footprint (what its verified "
        "reference solution's calls change): a task-blind agent that changes everything can pass every check "
        "(rt9-A F3). None: the scenario has no footprint.")
    collateral_paths: list[str] = Field(
        default_factory=list, description="The first few of those changes, as JSON Pointers into the state.")
    error: str | None = Field(
        default=None,
        description="Why an episode that ended in 'error' ended: the model failure's one-line message (an "
        "unusable answer, the endpoint's content filter, a refused request), so a dropped episode says why.")
