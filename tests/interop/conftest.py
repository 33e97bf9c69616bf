"""Shared helpers for the EnvScaler interop specs: fixture files, a fresh store, one import."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from envscaler_core.config import Settings, load_settings
from envscaler_core.interop.importer import ImportReport, import_envscaler
from envscaler_core.interop.solutions import SOLUTIONS_FILE, dump, solution_entry, solutions_document
from envscaler_core.models.scenario import ToolCall
from envscaler_core.store import Store

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "envscaler"
FILES = ("env_metadata.json", "rl_scenario_metadata.json", "sft_scenario_metadata.json")

EXPECTED_RL = {  # index in rl_scenario_metadata.json -> audit class (see tests/fixtures/envscaler/README.md)
    0: "verified", 1: "verified", 2: "unproven", 3: "vacuous", 4: "check_error", 5: "check_error", 6: "not_bool",
    7: "vacuous", 8: "unproven", 9: "check_error", 10: "check_error", 11: "check_error", 12: "check_error",
    13: "unproven", 14: "verified", 15: "unproven", 16: "env_rejected", 17: "env_rejected", 18: "env_rejected",
}
EXPECTED_SFT = {0: "unproven", 1: "unproven", 2: "unproven", 3: "unproven", 4: "env_rejected"}


def write_solutions(directory: Path, plans: dict[str, list[dict[str, Any]]]) -> Path:
    """Our reference-solutions sidecar for the RL records whose task_id has a plan."""
    records = json.loads((directory / "rl_scenario_metadata.json").read_text())
    entries = [solution_entry(r, [ToolCall(tool=c["name"], args=c["arguments"]) for c in plans[str(r["task_id"])]])
               for r in records if isinstance(r, dict) and str(r.get("task_id")) in plans]
    path = directory / SOLUTIONS_FILE
    path.write_bytes(dump(solutions_document(entries)))
    return path


def write_scenarios_dir(directory: Path, env_id: str, env: dict[str, Any], scenarios: list[dict[str, Any]],
                        plans: dict[str, list[dict[str, Any]]]) -> Path:
    """EnvScaler's files for one env and its RL scenarios, with `plans` (task id -> calls) as their
    reference solutions in our sidecar; no SFT records."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "env_metadata.json").write_text(json.dumps({env_id: env}, indent=2))
    (directory / "rl_scenario_metadata.json").write_text(json.dumps(scenarios, indent=2))
    (directory / "sft_scenario_metadata.json").write_text("[]")
    write_solutions(directory, plans)
    return directory


def check_scenarios(env: dict[str, Any], checks: dict[str, str], init_config: dict[str, Any]) -> list[dict[str, Any]]:
    """One RL record of `env` per check (task id -> its `check_func` source), all on `init_config`."""
    return [{"env_id": env["env_id"], "env_class_name": env["env_class_name"], "task_id": tid, "init_config": init_config,
             "task": f"Task {tid}.", "checklist": [tid], "checklist_with_func": [{"check_item": tid, "check_func": src}]}
            for tid, src in checks.items()]


def write_one_scenario_dir(directory: Path, env: dict[str, Any], scenario: dict[str, Any],
                           plan: list[dict[str, Any]]) -> Path:
    """`write_scenarios_dir` for one scenario (its env keyed by the scenario's env_id)."""
    return write_scenarios_dir(directory, scenario["env_id"], env, [scenario], {str(scenario["task_id"]): plan})


def fixture_files(tmp: Path) -> Path:
    """The fixture's EnvScaler files and their reference solutions, copied into `tmp/envscaler`."""
    directory = tmp / "envscaler"
    directory.mkdir()
    for name in FILES:
        shutil.copy(FIXTURES / name, directory / name)
    write_solutions(directory, json.loads((FIXTURES / "reference_plans.json").read_text()))
    return directory


@pytest.fixture
def envscaler_dir(tmp_path: Path) -> Path:
    """The fixture files copied to a fresh directory, with the reference plans as our sidecar."""
    return fixture_files(tmp_path)


def settings_for(tmp_path: Path, **overrides: Any) -> Settings:
    return load_settings(environ={}, overrides={"store": {"url": f"duckdb:///{tmp_path / 'store.duckdb'}"}, **overrides})


def run_import(directory: Path, settings: Settings, runtime: Any, run_id: str = "imp", **kwargs: Any) -> ImportReport:
    with Store.from_url(settings.store.url) as store:
        return import_envscaler(directory / FILES[0], [directory / FILES[1], directory / FILES[2]], store=store,
                                runtime=runtime, settings=settings, run_id=run_id, **kwargs)


def import_one_env(tmp: Path, env: dict[str, Any], scenarios: list[dict[str, Any]],
                   plans: dict[str, list[dict[str, Any]]], runtime: Any, run_id: str, *, rl_export: bool = False
                   ) -> dict[str, Any]:
    """Import one env (`write_scenarios_dir`) and read back what the specs look at: the report, the stored
    verdicts (`envs`, `scenarios`), `accepted` envs and `promoted` scenarios; with `rl_export`, an accepted
    env's RL export too (`rl`: its parquet file, for `load_rl_set`)."""
    from envscaler_core.export import export_run
    from envscaler_core.models import AcceptedEnv, Scenario
    from envscaler_core.models.interop import ImportedEnv, ImportedScenario

    directory = write_scenarios_dir(tmp / "envscaler", env["env_id"], env, scenarios, plans)
    settings = settings_for(tmp)
    report = run_import(directory, settings, runtime, run_id=run_id)
    with Store.from_url(settings.store.url) as store:
        accepted = store.query(AcceptedEnv, run_id=run_id)
        if rl_export and accepted:
            export_run(store, run_id, settings, tmp / "out", formats=["rl"])
        return {"report": report, "envs": store.query(ImportedEnv, run_id=run_id),
                "scenarios": store.query(ImportedScenario, run_id=run_id), "accepted": accepted,
                "promoted": store.query(Scenario, run_id=run_id), "pool": runtime,
                "rl": tmp / "out" / run_id / "rl_scenarios.parquet"}


@pytest.fixture(scope="module")
def fixture_import(tmp_path_factory: pytest.TempPathFactory, sandbox_pool: Any) -> dict[str, Any]:
    """One import of the fixture files, shared by the specs that only read its outcome."""
    tmp = tmp_path_factory.mktemp("fixture-import")
    directory = fixture_files(tmp)
    settings = settings_for(tmp)
    report = run_import(directory, settings, sandbox_pool)
    return {"report": report, "settings": settings, "dir": directory}
