"""Spec: two verified EnvScaler records with the same env, task and init_config but different checklists
are two factory scenarios: each checklist reaches the RL export and rollouts, and a trajectory carries the
task_id of the record whose checks scored it. Records that are the same checklist included (only their
task_id differs) stay one scenario, labelled with the first. Before (EnvScaler differential round 3, F1) a
scenario's identity was env, state and task only: t3's checklist was lost, and the trajectory scored with
t8's checks was labelled t3 (the factory paid 0.6667, EnvScaler 1.0 on t3)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from envscaler_core.config import Settings
from envscaler_core.export import export_run
from envscaler_core.export.rl import row_to_records
from envscaler_core.models import AcceptedEnv, ToolCall
from envscaler_core.models.scenario import Scenario
from envscaler_core.rollout import replay_agent, run_rollout
from envscaler_core.store import Store
from tests.interop.conftest import run_import, settings_for, write_scenarios_dir
from tests.interop.test_checks_on_records_the_task_creates import CREATED, ENV, PLAN

TWO = "def check_func(final_state):\n    return len(final_state['hotel']['reservations']) == 2"
CHECKS = {"t3": [CREATED], "t8": [CREATED, TWO], "t9": [CREATED]}  # t9 repeats t3, checklist included


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory, sandbox_pool: Any) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("differing-checks")
    directory = tmp / "envscaler"
    scenarios = [{"env_id": "env_hotel", "env_class_name": "HotelDesk", "task_id": tid,
                  "init_config": {"hotel": {"reservations": {}}}, "task": "Reserve a room for Ana.",
                  "checklist": [f"reserved {k}" for k in range(len(funcs))],
                  "checklist_with_func": [{"check_item": f"reserved {k}", "check_func": f} for k, f in enumerate(funcs)]}
                 for tid, funcs in CHECKS.items()]
    twice = [*PLAN, {"name": "reserve", "arguments": {"guest": "bo"}}]
    write_scenarios_dir(directory, "env_hotel", ENV, scenarios, {"t3": PLAN, "t8": twice, "t9": PLAN})
    settings = settings_for(tmp, rollout={"require_all_passed": False})  # t8's 0.5 is exported too
    run_import(directory, settings, sandbox_pool, run_id="diffchecks")
    with Store.from_url(settings.store.url) as store:
        [env] = store.query(AcceptedEnv, run_id="diffchecks")
        promoted = store.query(Scenario, run_id="diffchecks")
        plan = [ToolCall(tool=c["name"], args=c["arguments"]) for c in PLAN]
        trajs = [asyncio.run(run_rollout(env, sc, sandbox_pool, None, Settings(), agent=replay_agent(plan)))
                 for sc in promoted]
        store.upsert(trajs, "diffchecks")
        export_run(store, "diffchecks", settings, tmp / "out", formats=["envscaler", "rl"])
    out = tmp / "out" / "diffchecks"
    return {"promoted": promoted, "trajs": trajs,
            "traj": json.loads((out / "envscaler_sft_traj.json").read_text(encoding="utf-8")),
            "rl": [json.loads(line) for line in (out / "rl_scenarios.jsonl").read_text().splitlines()]}


def test_records_whose_checklists_differ_are_two_scenarios(exported: dict[str, Any]) -> None:
    assert sorted(len(s.checks) for s in exported["promoted"]) == [1, 2]


def test_each_checklist_reaches_the_rl_export(exported: dict[str, Any]) -> None:
    assert sorted(len(row["checks"]) for row in exported["rl"]) == [1, 2]


def test_each_trajectory_names_the_record_whose_checks_scored_it(exported: dict[str, Any]) -> None:
    # the replayed plan reserves once: t3's one check passes (1.0), t8's second check does not (0.5)
    rewards = {row["task_info"]["task_id"]: row["total_reward"] for row in exported["traj"]}
    assert rewards == {"t3": 1.0, "t8": 0.5}


def test_the_rl_rows_load_back_as_the_same_scenarios(exported: dict[str, Any]) -> None:
    fps = {row_to_records(row)[1].fingerprint for row in exported["rl"]}
    assert fps == {s.fingerprint for s in exported["promoted"]}

