"""Spec: a real factory run (demo size, the mock LLM, the real sandbox, Prefect) exported in EnvScaler's
formats loads in a consumer written to EnvScaler's documented contract, and re-imports to the same
envs, scenarios and audit; without the reference-solutions sidecar, `--solve` finds them again."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from envscaler.demo import DEMO_OVERRIDES, SLICE
from envscaler_core.config import load_settings, public_config
from envscaler_core.interop.export import ENVS_FILE, RL_FILE, SFT_FILE
from envscaler_core.interop.solutions import SOLUTIONS_FILE, scenario_key
from envscaler_core.models import AcceptedEnv, Scenario
from envscaler_core.models.interop import ImportedScenario
from envscaler_core.store import Store
from tests.fixtures.llm import mock_llm_settings
from tests.interop.conftest import settings_for
from tests.interop.envscaler_contract import ContractEnv

pytestmark = [pytest.mark.prefect, pytest.mark.slow]

RUN = "factory"


@pytest.fixture(scope="module")
def factory(prefect_api: str, mock_server: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    from flows.factory import factory_flow

    tmp = tmp_path_factory.mktemp("factory-envscaler")
    overrides = {**DEMO_OVERRIDES, "store": {"url": f"duckdb:///{tmp / 'factory.duckdb'}"},
                 "llm": mock_llm_settings(mock_server.base_url).model_dump(mode="json"),
                 "flow": {**DEMO_OVERRIDES["flow"], "out_dir": str(tmp / "out")}}
    config = public_config(load_settings(environ={}, overrides=overrides))
    summary = asyncio.run(factory_flow(run_id=RUN, sources=[str(SLICE)], config=config))
    assert summary["status"] == "completed", summary
    with Store.from_url(config["store"]["url"]) as store:
        envs = store.query(AcceptedEnv, run_id=RUN)
        scenarios = store.query(Scenario, run_id=RUN)
    assert envs and any(s.status == "verified" for s in scenarios), summary
    out = _export(load_settings(environ={}, overrides=config), RUN, tmp / "envscaler-out")
    return {"out": out, "envs": envs, "scenarios": scenarios, "tmp": tmp}


def _copy(out: Path, target: Path, with_solutions: bool = True) -> Path:
    target.mkdir(parents=True)
    for name in (ENVS_FILE, RL_FILE, SFT_FILE, *((SOLUTIONS_FILE,) if with_solutions else ())):
        shutil.copy(out / name, target / name)
    return target


def _import(directory: Path, settings: Any, runtime: Any, run_id: str, **kwargs: Any) -> Any:
    from envscaler_core.interop.importer import import_envscaler

    with Store.from_url(settings.store.url) as store:
        return import_envscaler(directory / ENVS_FILE, [directory / RL_FILE, directory / SFT_FILE], store=store,
                                runtime=runtime, settings=settings, run_id=run_id, **kwargs)


def _export(settings: Any, run_id: str, out: Path) -> Path:
    from envscaler_core.export import export_run

    with Store.from_url(settings.store.url) as store:
        export_run(store, run_id, settings, out, formats=["envscaler"])
    return out / run_id


def test_the_factory_export_holds_every_accepted_env_and_scenario(factory: dict[str, Any]) -> None:
    envs = json.loads((factory["out"] / ENVS_FILE).read_text())
    rl = json.loads((factory["out"] / RL_FILE).read_text())
    assert sorted(envs) == sorted(e.env_id for e in factory["envs"])
    assert all(set(r) == {"env_id", "env_class_name", "task_id", "init_config", "task", "checklist", "checklist_with_func"}
               for r in rl)
    assert len(rl) == len(factory["scenarios"]) and json.loads((factory["out"] / SFT_FILE).read_text()) == []
    for record in envs.values():
        assert {"env_class_name", "env_class_code", "environment_introduction", "constraints_rules", "tools",
                "operation_list", "state_space_definition", "env_structure", "env_class_def"} <= set(record)


def test_envscalers_contract_rewards_each_reference_solution_fully_and_the_initial_state_less(factory: dict[str, Any]) -> None:
    out = factory["out"]
    solutions = {e["key"]: e["calls"] for e in json.loads((out / SOLUTIONS_FILE).read_text())["solutions"]}
    env = ContractEnv(out / ENVS_FILE, out / RL_FILE)
    verified = sum(s.status == "verified" for s in factory["scenarios"])
    played = 0
    for index, task in enumerate(env.task_items):
        calls = solutions.get(scenario_key(task))
        if calls is None:
            continue
        env.reset(index)
        assert env.reward() < 1.0, f"task {index} is already solved on its initial state"
        for call in calls:
            env.step(call["name"], call["arguments"])
        assert env.reward() == 1.0, f"task {index}: the reference solution does not earn the full reward"
        played += 1
    assert played == verified > 0


def test_reimporting_the_export_gives_the_same_envs_scenarios_and_audit(factory: dict[str, Any], tmp_path: Path,
                                                                      sandbox_pool: Any) -> None:
    settings = settings_for(tmp_path)
    first = _import(_copy(factory["out"], tmp_path / "a"), settings, sandbox_pool, "rt1")
    verified = sum(s.status == "verified" for s in factory["scenarios"])
    assert first.summary["envs"] == {"accepted": len(factory["envs"]), "rejected": 0}
    assert first.summary["scenarios"]["verified"] == verified
    with Store.from_url(settings.store.url) as store:
        imported = store.query(ImportedScenario, run_id="rt1")
        envs = {e.env_id: e for e in store.query(AcceptedEnv, run_id="rt1")}
    originals = {(s.env_id, s.task, json.dumps(s.initial_state, sort_keys=True)): s for s in factory["scenarios"]}
    for s in imported:
        original = originals[(s.env_id, s.record["task"], json.dumps(s.record["init_config"], sort_keys=True))]
        assert [c["check_func"] for c in s.record["checklist_with_func"]] == [c.code for c in original.checks]
        assert (s.audit == "verified") == (original.status == "verified")
    for env in factory["envs"]:
        assert (envs[env.env_id].class_code, envs[env.env_id].tools) == (env.class_code, env.tools)

    again = _export(settings, "rt1", tmp_path / "out")
    for name in (ENVS_FILE, RL_FILE, SFT_FILE, SOLUTIONS_FILE):
        assert (again / name).read_bytes() == (factory["out"] / name).read_bytes(), name
    second = _import(_copy(again, tmp_path / "b"), settings, sandbox_pool, "rt2")
    assert {**second.summary, "run_id": "rt1"} == first.summary


def test_solve_finds_the_reference_solutions_again_with_the_agent_model(factory: dict[str, Any], tmp_path: Path,
                                                                        sandbox_pool: Any, mock_server: Any) -> None:
    settings = settings_for(tmp_path, llm=mock_llm_settings(mock_server.base_url).model_dump(mode="json"))
    directory = _copy(factory["out"], tmp_path / "c", with_solutions=False)
    plain = _import(directory, settings, sandbox_pool, "nosol")
    verified = sum(s.status == "verified" for s in factory["scenarios"])
    assert plain.summary["scenarios"]["verified"] == 0 and plain.summary["scenarios"]["unproven"] == verified
    solved = _import(directory, settings_for(tmp_path / "x", llm=settings.llm.model_dump(mode="json")), sandbox_pool,
                     "solved", solve=True, attempts=1)
    assert solved.summary["scenarios"]["verified"] == verified
    with Store.from_url(settings_for(tmp_path / "x").store.url) as store:
        origins = {s.solution_origin for s in store.query(ImportedScenario, run_id="solved", where={"audit": "verified"})}
    assert origins == {"agent"}
