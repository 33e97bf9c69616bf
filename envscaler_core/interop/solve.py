"""`--solve`: ask the configured agent model for a reference solution of each unproven scenario.

The agent plays the scenario through our rollout engine (gateway + sandbox episode, non-conversational,
the task given directly); the tool calls it made are then replayed the way EnvScaler's runtime would
run them and every check is judged on the result (`replay_audit.verify`). Only that replay promotes a
scenario to `verified`; what the agent or our own episode reported is never taken on trust. Each
scenario gets at most `attempts` episodes (sample 0, 1, ...: distinct LLM cache keys).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from envscaler_core.config import Settings
from envscaler_core.interop.sandboxed import parallel
from envscaler_core.interop.envjob import ScenarioVerdict, settle
from envscaler_core.interop.replay_audit import verify
from envscaler_core.interop.read import EnvInput, ScenarioInput, env_execution_config
from envscaler_core.interop.strict_json import json_problem, safe
from envscaler_core.llm.errors import LLMError
from envscaler_core.models.env import AcceptedEnv
from envscaler_core.models.scenario import CheckSpec, Scenario, ToolCall
from envscaler_core.runtime import EnvLoadError, EnvRuntime

Target = tuple[EnvInput, AcceptedEnv, ScenarioInput, ScenarioVerdict]


def calls_of(messages: list[dict[str, Any]]) -> list[ToolCall]:
    """Every tool call the agent made, in order (the replay decides which of them count)."""
    calls: list[ToolCall] = []
    for message in messages:
        if message.get("role") != "assistant":
            continue
        for call in message.get("tool_calls") or []:
            fn = call.get("function") or {}
            raw = fn.get("arguments") or "{}"
            try:
                args = json.loads(raw) if isinstance(raw, str) else raw
            except (ValueError, RecursionError):  # not JSON, an int too long to convert, nested absurdly deep
                continue
            if isinstance(fn.get("name"), str) and isinstance(args, dict) and json_problem(args) is None:
                calls.append(ToolCall(tool=fn["name"], args=args))
    return calls


def rollout_scenario(s: ScenarioInput) -> Scenario:
    config = env_execution_config(s.config)
    return Scenario(env_id=s.env_id, initial_state=config if isinstance(config, dict) else {}, task=s.task,
                    checks=[CheckSpec(item=item or f"check {k + 1}", code=src) for k, (item, src) in enumerate(s.checks or [])])


async def _play(target: Target, runtime: EnvRuntime, gateway: Any, settings: Settings, sample: int,
                limit: asyncio.Semaphore) -> list[ToolCall] | str:
    """The agent's calls, or why this attempt produced none."""
    from envscaler_core.rollout import run_rollout

    _, accepted, s, _ = target  # always the env's validated class (a scenario naming another is never a target)
    async with limit:
        try:
            traj = await run_rollout(accepted, rollout_scenario(s), runtime, gateway, settings, sample=sample)
        except EnvLoadError as exc:
            return f"our sandbox could not open the scenario for the agent: {exc}"
        except (RecursionError, ValueError, UnicodeError) as exc:
            # what one reply holds (arguments nested thousands deep, a 5000-digit integer, a lone surrogate)
            # fails this attempt of this scenario, never the whole import
            return safe(f"the agent's episode could not be used: {type(exc).__name__}: {str(exc)[:200]}")
    calls = calls_of(traj.messages)
    return calls if calls else "the agent made no tool call"


async def solve(targets: list[Target], runtime: EnvRuntime, gateway: Any, settings: Settings, attempts: int,
                threads: int) -> tuple[list[ScenarioVerdict], str | None]:
    """New verdicts aligned with `targets`, and why solving stopped early (endpoint down, budget...)."""
    play_settings = settings.model_copy(update={"rollout": settings.rollout.model_copy(update={"mode": "non_conversational"})})
    verdicts = [t[3] for t in targets]
    limit = asyncio.Semaphore(max(1, settings.flow.batches_in_flight * 2))
    stopped: str | None = None
    for sample in range(attempts):
        open_ = [k for k, v in enumerate(verdicts) if v.audit == "unproven"]
        if not open_:
            break
        try:
            played = await asyncio.gather(*(_play(targets[k], runtime, gateway, play_settings, sample, limit) for k in open_))
        except LLMError as exc:
            stopped = f"solving stopped at attempt {sample + 1}: {exc}"
            break
        tried = [(k, calls) for k, calls in zip(open_, played) if isinstance(calls, list)]
        for k, why in zip(open_, played):
            if isinstance(why, str):
                # the last attempt's failure is the scenario's reason, as `settle` makes it for an attempt whose
                # calls were replayed (it stayed "no reference solution yet", outside check F6)
                verdicts[k] = verdicts[k].model_copy(update={"attempts": [*verdicts[k].attempts, safe(f"agent: {why}")],
                                                             "reasons": [safe(why)]})
        by_env: dict[str, list[tuple[int, list[ToolCall]]]] = {}
        for k, calls in tried:
            by_env.setdefault(targets[k][0].env_id, []).append((k, calls))
        jobs = [_verify_job(targets, verdicts, group, runtime, settings, threads) for group in by_env.values()]
        results = await asyncio.to_thread(parallel, lambda job: job(), jobs, threads)
        for group in results:
            for k, verdict in group:
                verdicts[k] = verdict
    return verdicts, stopped


def _verify_job(targets: list[Target], verdicts: list[ScenarioVerdict], group: list[tuple[int, list[ToolCall]]],
                runtime: EnvRuntime, settings: Settings, threads: int) -> Any:
    def job() -> list[tuple[int, ScenarioVerdict]]:
        env = targets[group[0][0]][0]
        jobs = [(targets[k][2], verdicts[k].state0 or {}, verdicts[k].checks, calls) for k, calls in group]
        found = verify(runtime, env, jobs, settings.scen.check_timeout_s, threads, settings.scen.check_repeats)
        return [(k, settle(verdicts[k], audits, kept, problem, "agent", lost))
                for (k, _), (audits, kept, problem, lost) in zip(group, found)]
    return job
