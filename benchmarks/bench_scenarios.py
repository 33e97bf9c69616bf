"""Check-function throughput and rollout overhead per step, both through the real sandbox.

Each number is reported next to a baseline measured in the same run on the same machine, so the
ratio (not the absolute figure) is what to compare across machines:
- checks/s via `runtime.run_checks` vs the same checks exec'd in-process (no isolation);
- rollout ms/step with a scripted agent (no LLM) vs the raw `episode.call` it wraps.
"""

from __future__ import annotations

import asyncio
import copy
import time
from typing import Any

from envscaler_core.config import Settings, load_settings
from envscaler_core.models.scenario import ToolCall
from envscaler_core.rollout import ScriptedAgent, run_rollout
from envscaler_core.runtime import EnvRuntime
from tests.scenarios.helpers import LENT_B1, LOAN_ANA, LIBRARY_CODE, STATE, VACUOUS, library_env, scenario

CHECKS = [LENT_B1.code, LOAN_ANA.code, VACUOUS.code] * 20  # 60 checks per batch


def inprocess_checks(checks: list[str], initial: dict[str, Any], final: dict[str, Any]) -> list[bool]:
    out = []
    for code in checks:
        g: dict[str, Any] = {"initial_state": copy.deepcopy(initial)}
        exec(code, g)  # baseline only: trusted, hand-written checks
        out.append(g["check_func"](copy.deepcopy(final)))
    return out


def checks_per_second(runtime: EnvRuntime, batches: int = 5) -> tuple[float, float]:
    t0 = time.perf_counter()
    for _ in range(batches):
        outs = runtime.run_checks(CHECKS, STATE, STATE, timeout_s=2.0)
        assert all(o.passed is not None for o in outs), [o.error for o in outs if o.passed is None][:1]
    sandbox = batches * len(CHECKS) / (time.perf_counter() - t0)
    t0 = time.perf_counter()
    for _ in range(batches):
        inprocess_checks(CHECKS, STATE, STATE)
    return sandbox, batches * len(CHECKS) / (time.perf_counter() - t0)


def rollout_ms_per_step(runtime: EnvRuntime, steps: int = 40) -> tuple[float, float]:
    env = library_env()
    plan = [ToolCall(tool="get_book", args={"book_id": "b1"})] * steps
    settings = Settings.model_validate({"rollout": {"max_steps": steps + 1}})
    sc = scenario()
    t0 = time.perf_counter()
    traj = asyncio.run(run_rollout(env, sc, runtime, None, settings, agent=ScriptedAgent(plan)))
    per_step = (time.perf_counter() - t0) * 1000 / traj.steps
    ep = runtime.open_episode(LIBRARY_CODE, "Library", STATE, tools=[t.model_dump() for t in env.tools])
    try:
        t0 = time.perf_counter()
        for call in plan:
            ep.call(call.tool, call.args)
        raw = (time.perf_counter() - t0) * 1000 / steps
    finally:
        ep.close()
    return per_step, raw


def main() -> None:
    from sandbox import SandboxPool

    settings = load_settings()
    pool = SandboxPool(settings.sandbox)
    try:
        sandbox, inproc = checks_per_second(pool)
        print(f"checks/s sandbox={sandbox:.1f} in-process={inproc:.1f} ratio={sandbox / inproc:.4f}")
        per_step, raw = rollout_ms_per_step(pool)
        print(f"rollout ms/step scripted={per_step:.2f} raw-call={raw:.2f} overhead={per_step - raw:.2f}ms "
              "(includes open/close episode and final scoring, amortised)")
    finally:
        pool.close()


if __name__ == "__main__":
    main()
