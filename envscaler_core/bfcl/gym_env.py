"""BFCL multi-turn tasks behind the gym-style API (`envscaler_core.gym` conventions).

One episode is one task. `reset` opens a sandbox episode on the task's initial configuration and
returns the first user turn; `step` takes one model step, as BFCL's FC loop reads it: a tool call
(`{"tool", "args"}` or an OpenAI tool_call), whose observation is BFCL's text, or a list of them (the
calls of one assistant message, run in order as BFCL runs a step), whose observation is the list of
BFCL's texts. Every call runs as BFCL runs it, whatever its name: one BFCL cannot run (a name that is
no method of the task, `None`) fails alone and the rest of the step runs. `{"done": true}` or an empty
list (a reply without tool calls) ends the current turn and returns the next user turn; so does a step
BFCL cannot decode (arguments that are not a JSON object, a `custom` tool call), as BFCL's loop ends the
turn there: `info["decoding_error"]` says why. An action that is no tool call at all is an API error
that runs and counts nothing. After the last turn the reward is 1.0 when `multi_turn_checker` finds the
episode valid, else 0.0 (0 before that). More than `MAX_STEPS_PER_TURN` steps in one turn (each
action with calls is one step, however many calls each carries and whether they fail) truncate the
episode, as BFCL force-quits: before the last turn with reward 0 (`multi_turn:force_terminated`, the
turn counts differ); in the last turn BFCL's handler keeps the turn, so the checker scores the episode
and the reward is its verdict. `info["tools"]` is the turn's tool list (held-out functions appear at
their turn).
"""

from __future__ import annotations

import random
from typing import Any

from envscaler_core.bfcl.calls import UndecodableCalls, decode_tool_calls
from envscaler_core.bfcl.data import MAX_STEPS_PER_TURN, BFCLTask
from envscaler_core.bfcl.executor import SandboxedTask, force_terminated
from envscaler_core.bfcl.play import UNDECODABLE_REPLY
from envscaler_core.bfcl.schemas import tools_for
from envscaler_core.runtime import EnvRuntime, EpisodeBreach

StepResult = tuple[Any, float, bool, bool, dict[str, Any]]
"""(observation: a text, or a list of texts for a list action; reward; terminated; truncated; info)."""


class BFCLGymEnv:
    def __init__(self, tasks: list[BFCLTask], runtime: EnvRuntime) -> None:
        if not tasks:
            raise ValueError("BFCLGymEnv needs at least one task")
        self.tasks, self.runtime = list(tasks), runtime
        self._rng = random.Random(0)
        self._live: SandboxedTask | None = None
        self.task: BFCLTask | None = None
        self._turn, self._decoded, self._steps, self._over = 0, [], [], True

    def _info(self, **extra: Any) -> dict[str, Any]:
        assert self.task is not None
        return {"task_id": self.task.id, "turn": self._turn, "turns": len(self.task.turns),
                "tools": tools_for(self.task, self._turn), **extra}

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        """`options={"task_index": i}` or `{"task_id": "multi_turn_base_3"}` picks; else seeded random."""
        if seed is not None:
            self._rng = random.Random(seed)
        options = options or {}
        unknown = sorted(set(options) - {"task_index", "task_id"})
        if unknown:  # e.g. a synthesized env's scenario_index: silently ignored, it picked a random task
            raise ValueError(f"unknown reset option(s) {unknown}: a BFCL env takes task_index or task_id")
        if "task_id" in options and "task_index" in options:
            raise ValueError("give task_index or task_id, not both")
        if "task_id" in options:
            matches = [i for i, t in enumerate(self.tasks) if t.id == options["task_id"]]
            if not matches:
                raise ValueError(f"no task {options['task_id']!r} in this env")
            index = matches[0]
        else:
            index = options.get("task_index", self._rng.randrange(len(self.tasks)))
            if not isinstance(index, int) or isinstance(index, bool):
                raise ValueError(f"task_index must be an integer, got {index!r}")
            if not 0 <= index < len(self.tasks):
                raise ValueError(f"task_index {index!r} out of range 0..{len(self.tasks) - 1}")
        self.close()
        self.task = self.tasks[index]
        self._live = SandboxedTask(self.runtime, self.task)
        self._turn, self._decoded, self._steps, self._over = 0, [], [], False
        return self._user_text(), self._info()

    def _user_text(self) -> str:
        assert self.task is not None
        return "\n".join(m["content"] for m in self.task.user_messages(self._turn))

    def step(self, action: dict[str, Any] | list[dict[str, Any]]) -> StepResult:
        if self._over or self._live is None or self.task is None:
            raise RuntimeError("the episode is over (or was never started): call reset() first")
        if (isinstance(action, dict) and action.get("done") is True) or action == []:
            return self._end_turn()  # a step without calls ends the turn, as in BFCL
        actions = action if isinstance(action, list) else [action]
        calls = [action_call(one, i) for i, one in enumerate(actions)]
        if None in calls:  # not a model step at all: nothing runs, nothing is counted
            return ("Error during decoding: expected {'tool', 'args'}, an OpenAI tool_call, a list of them (one "
                    "step) or {'done': true}"), 0.0, False, False, self._info(is_error=True)
        calls = [{**call, "type": "custom"} if isinstance(one, dict) and one.get("type") == "custom" else call
                 for call, one in zip(calls, actions)]
        try:  # every name BFCL would run, runs (an unknown one fails alone, as in BFCL's executor)
            strings = decode_tool_calls(calls)
        except UndecodableCalls as exc:  # BFCL reads no calls in this step and ends the turn
            return self._end_turn(error=UNDECODABLE_REPLY.format(reason=exc))
        observations = self._live.execute_step(strings)
        self._steps.append(strings)
        observation: Any = observations if isinstance(action, list) else observations[0]
        if len(self._steps) > MAX_STEPS_PER_TURN:  # BFCL keeps the force-quit turn, then stops playing
            self._decoded.append(self._steps)
            self._steps = []
            return self._finish(observation, truncated=True)
        is_error = any(text.startswith("Error during execution") for text in observations)
        return observation, 0.0, False, False, self._info(is_error=is_error)

    def _end_turn(self, error: str | None = None) -> StepResult:
        """The next turn's user text (or the final reward); after an undecodable step, `info` carries
        `is_error` and the decoding error (`decoding_error`), which is the final observation."""
        assert self.task is not None
        self._decoded.append(self._steps)
        self._steps = []
        extra = {} if error is None else {"is_error": True, "decoding_error": error}
        if self._turn + 1 < len(self.task.turns):
            self._turn += 1
            return self._user_text(), 0.0, False, False, self._info(**extra)
        observation, reward, terminated, truncated, info = self._finish(error or '{"done": true}', truncated=False)
        return observation, reward, terminated, truncated, {**info, **extra}

    def _finish(self, observation: str, truncated: bool) -> StepResult:
        assert self.task is not None and self._live is not None
        self._over = True
        try:
            final_state = self._live.state
        except EpisodeBreach as exc:  # its replies may be forged: a crashed episode, no state, no reward
            self.close()
            return observation, 0.0, not truncated, truncated, self._info(
                verdict={"error_type": "sandbox:breach", "error_message": str(exc)}, final_state=None,
                decoded=self._decoded)
        try:
            if len(self._decoded) != len(self.task.ground_truth):  # eval_runner's test, not the force-quit's
                valid, verdict = False, force_terminated(len(self._decoded), len(self.task.ground_truth)).model_dump(
                    exclude={"details"})
            else:
                result = self._live.score(self._decoded)  # the unit's clean spare, before the episode closes
                valid, verdict = result.valid, result.model_dump(exclude={"details"})
        finally:
            self.close()
        info = self._info(verdict=verdict, final_state=final_state, decoded=self._decoded)
        return observation, 1.0 if valid else 0.0, not truncated, truncated, info

    def close(self) -> None:
        if self._live is not None:
            live, self._live = self._live, None
            live.close()


def action_call(action: Any, index: int = 0) -> dict[str, Any] | None:
    from envscaler_core.gym import action_to_call

    return action_to_call(action, index)
