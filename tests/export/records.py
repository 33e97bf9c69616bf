"""A real DuckDB store holding one run of real records: the hand-written library env, verified and
rejected scenarios, and trajectories played by scripted agents through the real sandbox."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from envscaler_core.config import Settings
from envscaler_core.models import Run, Scenario, ToolCall, Trajectory
from envscaler_core.rollout import ScriptedAgent, do_nothing_agent, replay_agent, run_rollout
from envscaler_core.store import Store
from tests.scenarios.helpers import LENT_B1, PLAN, VACUOUS, library_env, scenario

RUN_ID = "run-export-spec"


def verified(sc: Scenario) -> Scenario:
    return sc.model_copy(update={"status": "verified"})


def lend_dune() -> Scenario:
    """A second verified scenario with its own task and plan."""
    return verified(Scenario(
        env_id="env_library_test", initial_state=scenario().initial_state, task="Lend Dune (b1) to Bob.",
        checklist=[LENT_B1.item], checks=[LENT_B1],
        reference_solution=[ToolCall(tool="lend_book", args={"book_id": "b1", "member": "Bob"})],
    ))


@dataclass
class Populated:
    run_id: str
    scenarios_verified: list[Scenario]
    scenario_rejected: Scenario
    trajectories: list[Trajectory] = field(default_factory=list)


def play(runtime, sc: Scenario, agent, sample: int = 0) -> Trajectory:  # type: ignore[no-untyped-def]
    return asyncio.run(run_rollout(library_env(), sc, runtime, None, Settings(), sample=sample, agent=agent))


def populate(store: Store, runtime, run_id: str = RUN_ID) -> Populated:  # type: ignore[no-untyped-def]
    """Run, env, 2 verified + 1 rejected scenario, 4 trajectories: replay (reward 1), parallel replay
    (two calls per message, reward 1), a hallucinated tool first (one tool error, reward 1), and
    doing nothing (reward 0)."""
    store.save_run(Run(run_id=run_id))
    main, second = verified(scenario()), lend_dune()
    rejected = scenario([VACUOUS]).model_copy(
        update={"task": "Lend Ulysses (b3) to Ana.", "status": "rejected", "rejection_reason": "vacuous check"})
    trajs = [
        play(runtime, main, replay_agent(PLAN)),
        play(runtime, main, replay_agent(PLAN, per_message=2), sample=1),
        play(runtime, main, ScriptedAgent([ToolCall(tool="teleport_book", args={"book_id": "b1"}), *PLAN])),
        play(runtime, main, do_nothing_agent()),
    ]
    store.upsert([library_env(), main, second, rejected, *trajs], run_id)
    return Populated(run_id, [main, second], rejected, trajs)
