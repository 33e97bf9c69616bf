"""BFCL episodes and scoring through an `EnvRuntime` (the sandbox): the host side of `jail_env.py`.

`SandboxedTask` holds one episode of `BFCLEnvironment` for a task; `execute(call)` runs one call
string and returns the observation BFCL's loop would put in the tool message. `score_in_runtime`
runs `multi_turn_checker` in a fresh episode of `BFCLScorer`. A sandbox failure (a call that timed
out or crashed its process) is an observation starting with "Error during execution:", like any
other failed call, so the agent goes on; the episode itself restarts from the last committed state.
"""

from __future__ import annotations

from typing import Any, Protocol

from pydantic import Field

from envscaler_core.bfcl.data import BFCLTask
from envscaler_core.bfcl.package import episode_code
from envscaler_core.models.base import Model
from envscaler_core.runtime import CallOutcome, Episode, EnvRuntime

ENV_CLASS = "BFCLEnvironment"
SCORER_CLASS = "BFCLScorer"


class Verdict(Model):
    """`multi_turn_checker`'s answer (or the harness's reason when it could not be asked)."""

    valid: bool
    error_type: str | None = None
    error_message: str | None = None
    details: Any = Field(default=None, description="The checker's details, rendered to JSON (capped).")


class TaskExecutor(Protocol):
    """What the turn loop needs: run one call string, get BFCL's observation text."""

    def execute(self, call: str) -> str: ...

    def close(self) -> None: ...


def observation_of(outcome: CallOutcome) -> str:
    if outcome.ok and isinstance(outcome.result, str):
        return outcome.result
    if outcome.ok:  # BFCLEnvironment.execute always returns text; anything else is a broken episode
        return f"Error during execution: the sandbox returned {type(outcome.result).__name__}, not text"
    return f"Error during execution: sandbox {outcome.error_kind}: {outcome.error}"


class SandboxedTask:
    """One BFCL task's API instances, live in one sandbox episode."""

    def __init__(self, runtime: EnvRuntime, task: BFCLTask) -> None:
        self.task = task
        self.episode: Episode = runtime.open_episode(episode_code(), ENV_CLASS, task.sandbox_spec())
        self.outcomes: list[CallOutcome] = []

    def call(self, call: str) -> CallOutcome:
        outcome = self.episode.call("execute", {"call": call})
        self.outcomes.append(outcome)
        return outcome

    def execute(self, call: str) -> str:
        return observation_of(self.call(call))

    @property
    def state(self) -> dict[str, Any]:
        """`{"classes": {class: public attributes rendered}, "executed": [call strings]}`."""
        return self.episode.state

    def close(self) -> None:
        self.episode.close()

    def __enter__(self) -> SandboxedTask:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def score_in_runtime(runtime: EnvRuntime, task: BFCLTask, decoded: list[list[list[str]]]) -> Verdict:
    """`multi_turn_checker(decoded, ground truth, ...)` in a fresh sandbox episode."""
    episode = runtime.open_episode(episode_code(), SCORER_CLASS, task.sandbox_spec())
    try:
        outcome = episode.call("score", {"decoded": decoded, "ground_truth": task.ground_truth})
    finally:
        episode.close()
    if not outcome.ok or not isinstance(outcome.result, dict):
        return Verdict(valid=False, error_type="envscaler:checker_failed",
                       error_message=f"the checker did not finish in the sandbox ({outcome.error_kind}): {outcome.error}")
    return Verdict.model_validate(outcome.result)
