"""BFCL episodes and scoring through an `EnvRuntime` (the sandbox): the host side of `jail_env.py`.

`SandboxedTask` holds one episode of `BFCLEnvironment` for a task; `execute(call)` runs one call
string and returns the observation BFCL's loop would put in the tool message; `execute_step(calls)`
runs a model step's calls in one round trip; `score(decoded)` runs `multi_turn_checker` in the spare
of the episode's unit: a process forked before the episode ran anything, so nothing the played calls
did can reach it (no second unit; any failure there scores again in a fresh unit). `score_in_runtime`
runs `multi_turn_checker` in a fresh episode of `BFCLScorer`. A sandbox failure (a call that timed
out or crashed its process) is an observation starting with "Error during execution:", like any
other failed call, so the agent goes on; the episode itself restarts from the last committed state.
"""

from __future__ import annotations

import inspect
from typing import Any, Protocol

from pydantic import Field

from envscaler_core.bfcl.data import BFCLTask
from envscaler_core.bfcl.package import episode_code
from envscaler_core.models.base import Model
from envscaler_core.runtime import CallOutcome, EnvLoadError, Episode, EnvRuntime, EpisodeBreach

ENV_CLASS = "BFCLEnvironment"
SCORER_CLASS = "BFCLScorer"


class Verdict(Model):
    """`multi_turn_checker`'s answer (or the harness's reason when it could not be asked)."""

    valid: bool
    error_type: str | None = None
    error_message: str | None = None
    details: Any = Field(default=None, description="The checker's details, rendered to JSON (capped).")


def force_terminated(played_turns: int, ground_truth_turns: int) -> Verdict:
    """BFCL's eval_runner verdict for a play whose turn count is not the ground truth's. Its handler
    keeps the turn it force-quits in, so a force-quit in the last turn has every turn and is checked;
    only one before it (or a task with fewer user turns than ground-truth turns) is judged here."""
    return Verdict(valid=False, error_type="multi_turn:force_terminated", error_message=(
        "Model was force-terminated during inference phase. The length of the model result turns "
        f"({played_turns}) does not match the length of the ground truth turns ({ground_truth_turns})."))


class CheckerFailed(RuntimeError):
    """`multi_turn_checker` could not give a verdict in the sandbox (its episode timed out, crashed or
    came back without one): the harness failed, not the model, so the task stays unscored (pending)."""


class TaskExecutor(Protocol):
    """What the turn loop needs: run a step's call strings in order, get BFCL's observation texts."""

    def execute(self, call: str) -> str: ...

    def execute_step(self, calls: list[str]) -> list[str]: ...

    def close(self) -> None: ...


def observation_of(outcome: CallOutcome) -> str:
    if outcome.ok and isinstance(outcome.result, str):
        return outcome.result
    if outcome.ok:  # BFCLEnvironment.execute always returns text; anything else is a broken episode
        return f"Error during execution: the sandbox returned {type(outcome.result).__name__}, not text"
    return f"Error during execution: sandbox {outcome.error_kind}: {outcome.error}"


class SandboxedTask:
    """One BFCL task's API instances, live in one sandbox episode (whose unit keeps a clean spare process
    for `score`, where the runtime offers one)."""

    def __init__(self, runtime: EnvRuntime, task: BFCLTask, model_name: str | None = None) -> None:
        self.task, self.runtime, self.model_name = task, runtime, model_name
        if _takes(runtime, "spare"):
            # a rebuild after a crash replays every call run so far, so it may take that many calls' time
            self.episode: Episode = runtime.open_episode(episode_code(), ENV_CLASS, task.sandbox_spec(model_name), spare=True,
                                                         load_calls=_replayed_calls)
        else:
            self.episode = runtime.open_episode(episode_code(), ENV_CLASS, task.sandbox_spec(model_name))
        self.outcomes: list[CallOutcome] = []

    def call(self, call: str) -> CallOutcome:
        outcome = self.episode.call("execute", {"call": call})
        self.outcomes.append(outcome)
        return outcome

    def execute(self, call: str) -> str:
        return observation_of(self.call(call))

    def execute_step(self, calls: list[str]) -> list[str]:
        """A model step's calls in one round trip (`BFCLEnvironment.execute_all`). If that does not
        come back whole (a call timed out, crashed its process, or escaped with an exception), the
        episode is back at its state before the step, and the calls run again one at a time, so each
        gets the outcome it gets when run alone (the slow path costs one more round trip per call)."""
        if len(calls) < 2:
            return [self.execute(call) for call in calls]
        outcome = self.episode.call("execute_all", {"calls": list(calls)})
        result = outcome.result
        if (outcome.ok and isinstance(result, list) and len(result) == len(calls)
                and all(isinstance(text, str) for text in result)):
            self.outcomes.append(outcome)
            return result
        return [self.execute(call) for call in calls]

    @property
    def state(self) -> dict[str, Any]:
        """`{"classes": {class: public attributes rendered}, "executed": [call strings]}`."""
        return self.episode.state

    def score(self, decoded: list[list[list[str]]]) -> Verdict:
        """`multi_turn_checker` on the played calls, in a process this episode's calls never reached: the
        unit's spare, forked before the episode loaded (call before `close`, which ends the unit). If
        the spare cannot give a verdict (none left, it crashed, or the episode's process took the unit
        down), the checker runs again in a fresh unit, so the verdict never depends on the played calls'
        side effects; a checker that fails there too raises `CheckerFailed`, as `score_in_runtime` does."""
        open_spare = getattr(self.episode, "open_spare", None)
        if open_spare is None:
            return score_in_runtime(self.runtime, self.task, decoded, self.model_name)
        try:
            episode = open_spare(episode_code(), SCORER_CLASS, _scoring_config(self.task, decoded, self.model_name),
                                 load_calls=lambda _: _checker_calls(self.task, decoded))
        except EnvLoadError:
            return score_in_runtime(self.runtime, self.task, decoded, self.model_name)
        try:
            result = episode.state.get("verdict")
        except EpisodeBreach:  # its answer may be forged: ask again in a fresh unit
            result = None
        finally:
            episode.close()
        if not isinstance(result, dict):
            return score_in_runtime(self.runtime, self.task, decoded, self.model_name)
        return Verdict.model_validate(result)

    def close(self) -> None:
        self.episode.close()

    def __enter__(self) -> SandboxedTask:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _takes(runtime: EnvRuntime, keyword: str) -> bool:
    """Does `open_episode` take `keyword` (`spare`, `load_calls`: `SandboxPool`'s, not every `EnvRuntime`'s)?"""
    try:
        return keyword in inspect.signature(runtime.open_episode).parameters
    except (TypeError, ValueError):
        return False


def _replayed_calls(restore: dict[str, Any] | None) -> int:
    executed = restore.get("executed") if isinstance(restore, dict) else None
    return 1 + (len(executed) if isinstance(executed, list) else 0)


def _checker_calls(task: BFCLTask, decoded: list[list[list[str]]]) -> int:
    """The checker replays every decoded call and every ground-truth call: its load may take as long."""
    played = sum(len(step) for turn in decoded for step in turn)
    return 1 + played + sum(len(turn) for turn in task.ground_truth)


def _scoring_config(task: BFCLTask, decoded: list[list[list[str]]], model_name: str | None = None) -> dict[str, Any]:
    return {**task.sandbox_spec(model_name), "_score": {"decoded": decoded, "ground_truth": task.ground_truth}}


def score_in_runtime(runtime: EnvRuntime, task: BFCLTask, decoded: list[list[list[str]]],
                     model_name: str | None = None) -> Verdict:
    """`multi_turn_checker(decoded, ground truth, ...)` in a fresh sandbox episode, which scores while it
    loads (its state is the verdict): one round trip to a unit that ran nothing else."""
    config = _scoring_config(task, decoded, model_name)
    extra = {"load_calls": lambda _: _checker_calls(task, decoded)} if _takes(runtime, "load_calls") else {}
    try:
        episode = runtime.open_episode(episode_code(), SCORER_CLASS, config, **extra)
    except EnvLoadError as exc:
        raise CheckerFailed(f"{task.id}: the checker did not finish in the sandbox: {exc}") from None
    try:
        result = episode.state.get("verdict")
    except EpisodeBreach as exc:
        raise CheckerFailed(f"{task.id}: the checker's process forged replies: {exc}") from None
    finally:
        episode.close()
    if not isinstance(result, dict):
        raise CheckerFailed(f"{task.id}: the checker's episode came back without a verdict")
    return Verdict.model_validate(result)
