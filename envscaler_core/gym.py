"""A gym-style API over verified scenarios, for RL frameworks (gymnasium/gem conventions).

`ScenarioEnv` is an environment *family*: one accepted env class and its scenarios. `reset` picks a
scenario (deterministically from the seed), opens a fresh sandbox episode on its initial state and
returns the task; `step` executes one tool call and returns its result as JSON text. The reward is
the same checklist fraction rollouts and verification use (`score_checks`), paid once when the agent
declares it is done (`{"done": true}`, or a `chat_with_user` call with `content`, the message to the
user, which ends the episode as in EnvScaler's runtime: `rollout/chat_call.py`) or the step budget runs
out (then `truncated`), and 0 before that. Bad actions
(unknown tool, malformed arguments, an action of no known shape) are observations, not exceptions,
as in rollouts: the policy must learn from them. A tool that raises (or whose process dies or times out)
ends the episode (`terminated`) with reward 0 and `info["ended"]` saying why, as EnvScaler's runtime does;
for an env imported from EnvScaler (`AcceptedEnv.episode_rules == "envscaler"`) so does a call its runtime
runs into a TypeError (`rollout/rules.py`). Env code only ever runs in the injected runtime.
The scored step's `info` also counts the episode's `collateral_changes`, changes outside what the
scenario's reference solution changes (`scenarios/footprint.py`): the reward does not see them (rt9-A F3).

`load_rl_set` builds these from the exported RL scenario file, so a trainer needs neither the store
nor the factory's pipeline, only this module and a runtime (`sandbox.SandboxPool`).
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from envscaler_core.export.rl import RLRowError, row_to_records
from envscaler_core.export.rl_file import check_manifest, read_rl_rows
from envscaler_core.models import AcceptedEnv, Scenario
from envscaler_core.prompts.agent import AGENT_NON_CONVERSATIONAL
from envscaler_core.rollout.agents import system_text
from envscaler_core.rollout.chat_call import chat_of
from envscaler_core.rollout.rules import CallRules, observed_json
from envscaler_core.synth.reserved import CHAT_WITH_USER
from envscaler_core.runtime import Episode, EnvRuntime, EpisodeBreach, open_env_episode
from envscaler_core.scenarios.footprint import SHOWN_PATHS, ChangeLog, collateral
from envscaler_core.scenarios.verify import reference_footprint, score_checks

MAX_ARGUMENT_CHARS = 4 << 20
"""Longest tool-call arguments (JSON text) a step takes, refused before parsing; the sandbox refuses a
call over the same size as JSON bytes (sandbox.limits.MAX_REQUEST_BYTES). Red team round 6, F6: a
50 MB argument cost the host 450 MB before the tool ran."""

Action = dict[str, Any]
StepResult = tuple[str, float, bool, bool, dict[str, Any]]


TOOL_ACTION_KEYS = ("tool", "args")
OPENAI_CALL_KEYS = ("id", "type", "function")
"""The keys of each documented call shape. An action holding both shapes ran the OpenAI one, and one with
an extra key ran too (red team 9, F6): which call was meant is not the gym's to guess."""


def action_problem(action: Any) -> str | None:
    """Why `action` is no tool call of exactly one documented shape (naming the keys), or None."""
    if not isinstance(action, dict) or not ({"tool", "function"} & set(action)):
        return "unrecognised action: expected {'tool': name, 'args': {...}}, an OpenAI tool_call, or {'done': true}"
    if "tool" in action and "function" in action:
        return ("an action is either {'tool', 'args'} or an OpenAI tool_call {'id', 'type', 'function'}, not both: "
                "this one has 'tool' and 'function' (nothing was run)")
    shape = OPENAI_CALL_KEYS if "function" in action else TOOL_ACTION_KEYS
    extra = [k for k in action if k not in shape]
    if extra:
        keys = ", ".join(repr(str(k))[:40] for k in extra[:4]) + (", ..." if len(extra) > 4 else "")
        return (f"{'an OpenAI tool_call' if shape is OPENAI_CALL_KEYS else 'a {tool, args} action'} takes only "
                f"{', '.join(map(repr, shape))}; this one also has {keys} (nothing was run)")
    return None


def action_to_call(action: Any, step: int) -> dict[str, Any] | None:
    """An OpenAI tool_call dict for a `{"tool", "args"}` or tool_call action; None if it is neither, or not
    exactly one of them (`action_problem` says why)."""
    if action_problem(action) is not None:
        return None
    if "function" in action:
        return {"id": action.get("id") or f"gym_call_{step}", "type": "function", "function": action["function"]}
    if "tool" in action:
        return {"id": f"gym_call_{step}", "type": "function",
                "function": {"name": str(action["tool"]), "arguments": _arguments_of(action.get("args", {}))}}
    return None


def _arguments_of(args: Any) -> Any:
    """A `{"tool", "args"}` action's arguments as tool_call text; a dict that cannot be written (nested past
    the recursion limit, a lone surrogate, a non-JSON value) stays a dict, so that the step's argument
    check refuses it with the text path's wording instead of raising out of step() (red team 7, F4)."""
    if isinstance(args, str):
        return args
    try:
        return json.dumps(args)
    except (TypeError, ValueError, RecursionError):
        return args if isinstance(args, dict) else "<not JSON-serialisable>"


class ScenarioEnv:
    """reset/step/close over one env's scenarios; see the module docstring for the reward rules."""

    def __init__(
        self,
        env: AcceptedEnv,
        scenarios: list[Scenario],
        runtime: EnvRuntime,
        *,
        max_steps: int = 30,
        check_timeout_s: float | None = None,
    ) -> None:
        if not scenarios:
            raise ValueError(f"ScenarioEnv for {env.env_id} needs at least one scenario")
        foreign = [s.fingerprint[:12] for s in scenarios if s.env_id != env.env_id]
        if foreign:
            raise ValueError(f"scenario(s) {foreign} belong to another env than {env.env_id}")
        unscorable = [s.fingerprint[:12] for s in scenarios if not s.checks]
        if unscorable:
            raise ValueError(f"scenario(s) {unscorable} have no checks, so no reward can be computed")
        if max_steps < 1:
            raise ValueError(f"max_steps must be >= 1, got {max_steps}")
        self.env, self.scenarios, self.runtime = env, list(scenarios), runtime
        self.max_steps, self.check_timeout_s = max_steps, check_timeout_s
        self.tools = [t.model_dump(mode="json") for t in env.tools]
        self._rules = CallRules(env)
        self._rng = random.Random(0)
        self._episode: Episode | None = None
        self._scenario: Scenario | None = None
        self._loaded_state: dict[str, Any] | None = None
        self._changes: ChangeLog | None = None
        self._footprints: dict[str, list[str] | None] = {}
        self._steps = 0
        self._over = True

    @property
    def scenario(self) -> Scenario | None:
        """The scenario of the current episode (None before the first reset)."""
        return self._scenario

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        """Start an episode; observation = the task. `options={"scenario_index": i}` picks explicitly."""
        if seed is not None:
            self._rng = random.Random(seed)
        if options is not None and not isinstance(options, dict):
            raise TypeError(f"options must be a dict such as {{'scenario_index': 0}}, not {type(options).__name__}")
        unknown = sorted(set(options or {}) - {"scenario_index"})
        if unknown:  # a typo (`scenario_fp`) silently picked a random scenario instead
            raise ValueError(f"unknown reset option(s) {', '.join(map(repr, unknown))}; the one option is 'scenario_index'")
        index = (options or {}).get("scenario_index")
        if index is None:
            index = self._rng.randrange(len(self.scenarios))
        elif not isinstance(index, int) or isinstance(index, bool):
            raise TypeError(f"scenario_index must be an int in 0..{len(self.scenarios) - 1}, not {index!r}")
        elif not 0 <= index < len(self.scenarios):
            raise ValueError(f"scenario_index {index!r} out of range 0..{len(self.scenarios) - 1}")
        self._close_episode()
        scenario = self.scenarios[index]
        self._episode = open_env_episode(self.runtime, self.env, scenario.initial_state)
        self._scenario, self._steps, self._over = scenario, 0, False
        try:
            self._loaded_state = self._episode.state  # the checks' initial_state, as in EnvScaler
        except EpisodeBreach:  # sticky: the final read raises it again and the episode scores nothing
            self._loaded_state = None
        self._changes = None if self._loaded_state is None else ChangeLog(self._loaded_state)
        info = {
            "env_id": self.env.env_id,
            "scenario_fp": scenario.fingerprint,
            "scenario_index": index,
            "tools": self.tools,
            "system_prompt": system_text(AGENT_NON_CONVERSATIONAL, self.env),
            "max_steps": self.max_steps,
        }
        return scenario.task, info

    def step(self, action: Action) -> StepResult:
        """One action: `{"tool": name, "args": {...}}`, an OpenAI tool_call dict, or `{"done": true}`."""
        if self._over or self._episode is None:
            raise RuntimeError("the episode is over (or was never started): call reset() first")
        if isinstance(action, dict) and action.get("done") is True and set(action) == {"done"}:
            return self._finish('{"done": true}', terminated=True, truncated=False, info={"action": "done"})
        if isinstance(action, dict) and "done" in action:  # a call and `done` at once, or a `done` that is not true
            self._steps += 1
            obs = observed_json({"error": _done_problem(action), "error_kind": "action"})
            refused = {"tool": None, "is_error": True, "steps": self._steps}
            if self._steps >= self.max_steps:
                return self._finish(obs, terminated=False, truncated=True, info=refused)
            return obs, 0.0, False, False, refused
        self._steps += 1
        call = action_to_call(action, self._steps)
        if call is None:
            obs = observed_json({"error": action_problem(action), "error_kind": "action"})
            is_error, tool = True, None
        else:
            tool = (call.get("function") or {}).get("name")
            arguments = (call.get("function") or {}).get("arguments")
            if isinstance(arguments, str) and len(arguments) > MAX_ARGUMENT_CHARS:
                obs, is_error = observed_json({
                    "error": f"arguments to {str(tool)[:80]} are {len(arguments):,} characters, over the "
                             f"{MAX_ARGUMENT_CHARS:,} a step takes (envscaler_core.gym.MAX_ARGUMENT_CHARS)",
                    "error_kind": "schema"}), True
            elif (chat := chat_of(call, self._rules.read_arguments)) is not None and chat.kind == "ends":
                # the message to the user: EnvScaler ends the episode here
                return self._finish(observed_json({"done": True, "by": CHAT_WITH_USER}), terminated=True, truncated=False,
                                    info={"action": CHAT_WITH_USER, "tool": tool, "is_error": False})
            elif chat is not None:
                obs, is_error = observed_json({"error": chat.why, "error_kind": "action"}), True
            else:
                seen = self._rules.run(self._episode, call)
                obs, is_error = seen.content, seen.is_error
                if seen.state is not None and self._changes is not None:
                    self._changes.saw(seen.state)  # a change undone by a later step still counts (rt10-A F3)
                if seen.ends is not None:
                    return self._finish(obs, terminated=True, truncated=False, ended=seen.ends,
                                        info={"tool": tool, "is_error": True})
        info: dict[str, Any] = {"tool": tool, "is_error": is_error, "steps": self._steps}
        if self._steps >= self.max_steps:
            return self._finish(obs, terminated=False, truncated=True, info=info)
        return obs, 0.0, False, False, info

    def _finish(self, obs: str, *, terminated: bool, truncated: bool, info: dict[str, Any],
                ended: str | None = None) -> StepResult:
        """Score and close the episode; `ended`: why a call ended it with reward 0 (no checks run, as in
        EnvScaler's runtime, which never computes a reward for an episode its step ended by an exception)."""
        assert self._episode is not None and self._scenario is not None
        try:
            final_state = self._episode.state
        except EpisodeBreach as exc:  # its replies may be forged: a crashed episode, no state, no reward
            self._over = True
            self._close_episode()
            info.update({"steps": self._steps, "all_passed": False, "check_results": [], "final_state": None,
                         "breach": f"the env's process forged replies, so the episode was not scored: {exc}"})
            return obs, 0.0, terminated, truncated, info
        self._over = True
        self._close_episode()
        if ended is not None:
            info.update({"steps": self._steps, "all_passed": False, "check_results": [], "final_state": final_state,
                         "ended": ended})
            return obs, 0.0, terminated, truncated, info
        reward, all_passed, results = score_checks(
            self.env, self._scenario, final_state, self.runtime, self.check_timeout_s, self._loaded_state
        )
        info.update({
            "steps": self._steps,
            "all_passed": all_passed,
            "check_results": [r.model_dump() for r in results],
            "final_state": final_state,
            **self._collateral(self._scenario, final_state),
        })
        return obs, reward, terminated, truncated, info

    def _collateral(self, scenario: Scenario, final_state: dict[str, Any]) -> dict[str, Any]:
        """`collateral_changes` (None: no footprint known) and the first `collateral_paths`: the reward is
        the checklist fraction, which does not see changes outside the task (rt9-A F3); this says them.
        The footprint is derived once per scenario (one episode replaying its reference solution)."""
        if scenario.fingerprint not in self._footprints:
            self._footprints[scenario.fingerprint] = reference_footprint(self.env, scenario, self.runtime)
        footprint = self._footprints[scenario.fingerprint]
        if footprint is None or self._changes is None:
            return {"collateral_changes": None, "collateral_paths": []}
        self._changes.saw(final_state)
        outside = collateral(footprint, self._changes.paths)
        return {"collateral_changes": len(outside), "collateral_paths": outside[:SHOWN_PATHS]}

    def _close_episode(self) -> None:
        if self._episode is not None:
            episode, self._episode = self._episode, None
            episode.close()

    def close(self) -> None:
        """Release the sandbox episode; the env can be reset again afterwards."""
        self._over = True
        self._close_episode()


def load_rl_set(
    path: str | Path, runtime: EnvRuntime, *, max_steps: int = 30, check_timeout_s: float | None = None,
    manifest: str | Path | None = None,
) -> list[ScenarioEnv]:
    """One `ScenarioEnv` per env in an exported RL file, in file order; a bad row is an `RLRowError`
    naming file and line, and so is a file that is empty, repeats a row, or differs from its export's
    manifest.json (beside it, or `manifest`) in rows or sha256 (`export/rl_file.py`)."""
    envs: dict[str, AcceptedEnv] = {}
    scenarios: dict[str, list[Scenario]] = {}
    rows = read_rl_rows(Path(path), None if manifest is None else Path(manifest))
    for where, row in rows:
        env, scenario = row_to_records(row, where)
        known = envs.setdefault(env.env_id, env)
        if (known.class_code, known.tools, known.episode_rules) != (env.class_code, env.tools, env.episode_rules):
            raise RLRowError(f"{where}: env {env.env_id} differs from its earlier rows (mixed exports?)")
        scenarios.setdefault(env.env_id, []).append(scenario)
    check_manifest(Path(path), len(rows), None if manifest is None else Path(manifest))
    return [
        ScenarioEnv(env, scenarios[env_id], runtime, max_steps=max_steps, check_timeout_s=check_timeout_s)
        for env_id, env in envs.items()
    ]


def load_bfcl_set(subset: str, runtime: EnvRuntime, limit: int | None = None) -> Any:
    """A gym env over a BFCL multi-turn subset (official package data; BFCL's checker gives the reward).
    The runtime must make the package importable in the jail: `SandboxPool(...,
    imports=JailImports(**envscaler_core.bfcl.package.jail_imports()))`. See `envscaler_core.bfcl.gym_env`."""
    from envscaler_core.bfcl.data import load_tasks
    from envscaler_core.bfcl.gym_env import BFCLGymEnv

    return BFCLGymEnv(load_tasks(subset, limit), runtime)  # type: ignore[arg-type]


def _done_problem(action: dict[str, Any]) -> str:
    """Why an action holding `done` was refused, naming what is wrong with this one (nothing was run)."""
    others = [k for k in action if k != "done"]
    if others:
        keys = ", ".join(repr(str(k))[:40] for k in others[:4]) + (", ..." if len(others) > 4 else "")
        return (f"an action is either a tool call or {{'done': true}}, not both: this one has 'done' and {keys} "
                "(nothing was run)")
    value = action["done"]
    try:
        shown = json.dumps(value)
    except (TypeError, ValueError):
        shown = repr(value)
    shown = shown if len(shown) <= 40 else shown[:37] + "..."
    what = f"{shown} ({'a string' if isinstance(value, str) else type(value).__name__})" if value is not False else "false"
    hint = "to go on, send a tool call instead" if value is False else "to end the episode, send {'done': true}"
    return f"'done' must be the boolean true, got {what}: {hint} (nothing was run)"
