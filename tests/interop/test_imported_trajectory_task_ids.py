"""Spec: in `--format envscaler`, a trajectory of an imported run names the verbatim `task_id` of the
record its scenario was promoted from, so it joins its scenario in the same export's
rl_scenario_metadata.json by (env_id, task_id). Before, it named the scenario fingerprint's first 16
hex digits, which an imported record's task id ("0915-142233") never is: no trajectory joined
(round-trip check 4, F1). A factory run keeps the fingerprint ids (tests/export/test_envscaler_sft.py)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from envscaler_core.config import Settings
from envscaler_core.export import export_run
from envscaler_core.models import AcceptedEnv, ToolCall
from envscaler_core.models.scenario import Scenario
from envscaler_core.rollout import replay_agent, run_rollout
from envscaler_core.store import Store
from tests.interop.conftest import run_import, settings_for, write_scenarios_dir
from tests.interop.test_checks_on_records_the_task_creates import CREATED, ENV, PLAN

TASK_IDS = ["0915-142233", 7]  # EnvScaler's ids are whatever its step wrote: a timestamp string, an int


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory, sandbox_pool: Any) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("imported-traj")
    directory = tmp / "envscaler"
    scenarios = [{"env_id": "env_hotel", "env_class_name": "HotelDesk", "task_id": tid,
                  "init_config": {"hotel": {"reservations": {}}}, "task": f"Reserve a room for Ana ({tid}).",
                  "checklist": ["reserved"], "checklist_with_func": [{"check_item": "reserved", "check_func": CREATED}]}
                 for tid in TASK_IDS]
    write_scenarios_dir(directory, "env_hotel", ENV, scenarios, {str(tid): PLAN for tid in TASK_IDS})
    settings = settings_for(tmp)
    run_import(directory, settings, sandbox_pool, run_id="imptraj")
    plan = [ToolCall(tool=c["name"], args=c["arguments"]) for c in PLAN]
    with Store.from_url(settings.store.url) as store:
        [env] = store.query(AcceptedEnv, run_id="imptraj")
        promoted = store.query(Scenario, run_id="imptraj")
        trajs = [asyncio.run(run_rollout(env, sc, sandbox_pool, None, Settings(), agent=replay_agent(plan)))
                 for sc in promoted]
        store.upsert(trajs, "imptraj")
        export_run(store, "imptraj", settings, tmp / "out", formats=["envscaler"])
    out = tmp / "out" / "imptraj"
    return {"promoted": promoted,
            "traj": json.loads((out / "envscaler_sft_traj.json").read_text(encoding="utf-8")),
            "rl": json.loads((out / "rl_scenario_metadata.json").read_text(encoding="utf-8"))}


def test_both_imported_scenarios_were_promoted_and_played(exported: dict[str, Any]) -> None:
    assert len(exported["promoted"]) == 2 and len(exported["traj"]) == 2


def test_each_trajectory_names_its_records_own_task_id(exported: dict[str, Any]) -> None:
    by_task = {row["task_info"]["task"]: row["task_info"]["task_id"] for row in exported["traj"]}
    assert by_task == {f"Reserve a room for Ana ({tid}).": tid for tid in TASK_IDS}


def test_each_trajectory_joins_its_scenario_in_the_same_export(exported: dict[str, Any]) -> None:
    scenarios = {(r["env_id"], r["task_id"]): r for r in exported["rl"]}
    for row in exported["traj"]:
        info = row["task_info"]
        assert scenarios[(info["env_id"], info["task_id"])]["task"] == info["task"]
