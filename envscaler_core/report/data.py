"""Everything the report shows, read from the store in one pass (no LLM, no sandbox, no network)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from envscaler_core.models import AcceptedEnv, EnvCandidate, Run, Scenario, SourceTask, Trajectory, ValidationRound
from envscaler_core.pipeline.report import RunSummary, build_summary

TRAJECTORIES_PER_ENV = 6
"""Shown per env (the rest are counted): a report of a large run must stay openable."""


class EnvView(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)

    env: AcceptedEnv
    rounds: list[ValidationRound] = Field(default_factory=list)
    scenarios: list[Scenario] = Field(default_factory=list)
    trajectories: list[Trajectory] = Field(default_factory=list)
    trajectories_total: int = 0
    mock_llm: bool = False


class ReportData(BaseModel):
    run: Run
    summary: RunSummary
    envs: list[EnvView]
    rejected: list[EnvCandidate]
    rejected_rounds: dict[str, list[ValidationRound]] = Field(default_factory=dict)
    not_stateful: list[SourceTask] = Field(default_factory=list, description="Tasks the judge dropped, with its reasons.")


def collect(store: Any, run_id: str) -> ReportData:
    run = store.get_run(run_id)
    if run is None:
        raise ValueError(f"no run {run_id!r} in {store.url}")
    rounds: dict[str, list[ValidationRound]] = {}
    for r in store.query(ValidationRound, run_id=run_id):
        rounds.setdefault(r.candidate_fp, []).append(r)
    scenarios: dict[str, list[Scenario]] = {}
    for s in store.query(Scenario, run_id=run_id):
        scenarios.setdefault(s.env_id, []).append(s)
    trajectories: dict[str, list[Trajectory]] = {}
    for t in store.query(Trajectory, run_id=run_id):
        trajectories.setdefault(t.env_id, []).append(t)
    envs = []
    for env in sorted(store.query(AcceptedEnv, run_id=run_id), key=lambda e: e.env_id):
        mine = trajectories.get(env.env_id, [])
        envs.append(EnvView(env=env, rounds=sorted(rounds.get(env.candidate_fp, []), key=lambda r: (r.mode, r.index)),
                            scenarios=scenarios.get(env.env_id, []), trajectories=mine[:TRAJECTORIES_PER_ENV],
                            trajectories_total=len(mine), mock_llm=run.mock_llm))
    rejected = [c for c in store.query(EnvCandidate, run_id=run_id) if c.status in ("rejected", "static_failed", "error")]
    not_stateful = store.query(SourceTask, run_id=run_id, where={"stateful": False})
    return ReportData(run=run, summary=build_summary(store, run_id), envs=envs, rejected=rejected, not_stateful=not_stateful,
                      rejected_rounds={c.fingerprint: sorted(rounds.get(c.fingerprint, []), key=lambda r: (r.mode, r.index))
                                       for c in rejected})
