"""Spec: validation probes an EnvScaler-style class on its config as the class holds it after loading,
with EnvScaler's type markers restored, for an import and for `envscaler validate --state` alike.

A garage keeps its permit holders as a set and its spots keyed by `(level, number)` tuples; the config
carries both as `{"__type__": ...}` markers (EnvScaler's own save). Planning from the marker JSON made
the probes offer the marker's keys (`__type__`, `items`) as permit holders and never a free spot, so a
sound class was rejected although its scenario's own solution scores 1.0 in EnvScaler's runtime."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from envscaler_core.models.interop import ImportedEnv, ImportedScenario
from envscaler_core.store import Store
from envscaler_core.synth import extract_tools
from envscaler_core.validation import plan_tools
from envscaler_core.validation.class_effects import ClassEffects
from tests.interop.conftest import run_import, settings_for, write_one_scenario_dir

REPO = Path(__file__).resolve().parents[2]

CODE = '''from typing import Dict, Optional, Set, Tuple


class Garage:
    def __init__(self, init_config: dict):
        self.spots: Dict[Tuple[str, int], Optional[str]] = {}
        self.permits: Set[str] = set()

    def park(self, level: str, number: int, plate: str) -> dict:
        """
        Park a car with a permit in a free spot.

        Args:
            level (str): The level, e.g. "B1".
            number (int): The spot number on that level.
            plate (str): The car's plate.

        Returns:
            dict: {"success": True, "message": str} or {"success": False, "error": str}
        """
        if plate not in self.permits:
            return {"success": False, "error": "no permit"}
        spot = (level, number)
        if spot not in self.spots:
            return {"success": False, "error": "no such spot"}
        if self.spots[spot] is not None:
            return {"success": False, "error": "occupied"}
        self.spots[spot] = plate
        return {"success": True, "message": f"parked at {level}-{number}"}
'''


def key(level: str, number: int) -> dict[str, Any]:
    return {"__type__": "key", "value": {"__type__": "tuple", "items": [level, number]}}


CONFIG = {  # B1-1 is taken, B1-2 and B2-1 are free; one permit holder
    "spots": {"__type__": "dict", "items": [[key("B1", 1), "XY-11"], [key("B1", 2), None], [key("B2", 1), None]]},
    "permits": {"__type__": "set", "items": ["KA-77"]},
}
TOOLS = [{"type": "function", "function": {
    "name": "park", "description": "Park a car with a permit in a free spot.",
    "parameters": {"type": "object", "properties": {"level": {"type": "string"}, "number": {"type": "integer"},
                                                    "plate": {"type": "string"}},
                   "required": ["level", "number", "plate"]}}}]
ENV = {"env_id": "env_garage", "environment_summary": "Garage", "environment_introduction": "A parking garage.",
       "state_space_definition": [], "constraints_rules": [], "env_class_name": "Garage", "env_class_code": CODE,
       "operation_list": [{"operation_name": "park", "operation_description": "Park.", "operation_type": "state_change"}],
       "tools": TOOLS}
CHECK = "def check_func(final_state):\n    return final_state['spots'][('B1', 2)] == 'KA-77'"


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory, sandbox_pool: Any) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("marker-probes")
    scenario = {"env_id": "env_garage", "env_class_name": "Garage", "task_id": "g1", "init_config": CONFIG,
                "task": "Park KA-77 at B1-2.", "checklist": ["parked"],
                "checklist_with_func": [{"check_item": "parked", "check_func": CHECK}]}
    directory = write_one_scenario_dir(tmp / "envscaler", ENV, scenario,
                                       [{"name": "park", "arguments": {"level": "B1", "number": 2, "plate": "KA-77"}}])
    settings = settings_for(tmp)
    run_import(directory, settings, sandbox_pool, run_id="garage")
    with Store.from_url(settings.store.url) as store:
        return {"envs": store.query(ImportedEnv, run_id="garage"),
                "scenarios": store.query(ImportedScenario, run_id="garage")}


def test_probes_take_a_set_member_and_a_free_tuple_key_from_a_marker_config() -> None:
    tools = extract_tools(CODE, "Garage")
    plan = plan_tools(tools, CONFIG, ClassEffects(CODE, "Garage"))[0]
    first = plan.positives()[0].args
    assert first["plate"] == "KA-77"
    assert (first["level"], first["number"]) in {("B1", 1), ("B1", 2), ("B2", 1)}
    assert any((p.args["level"], p.args["number"]) in {("B1", 2), ("B2", 1)} and p.args["plate"] == "KA-77"
               for p in plan.positives()[:4])


def test_an_imported_env_whose_config_uses_type_markers_is_accepted(imported: dict[str, Any]) -> None:
    assert [(e.status, e.reasons) for e in imported["envs"]] == [("accepted", [])]


def test_its_scenario_is_verified_by_the_solution_envscaler_rewards(imported: dict[str, Any]) -> None:
    assert [s.audit for s in imported["scenarios"]] == ["verified"], imported["scenarios"][0].reasons


def test_validate_with_a_marker_state_restores_it_for_the_class_and_the_probes(tmp_path: Path) -> None:
    (tmp_path / "garage.py").write_text(CODE)
    (tmp_path / "state.json").write_text(json.dumps(CONFIG))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ENVSCALER_"))}
    out = subprocess.run([sys.executable, "-m", "envscaler.cli", "validate", "--code", str(tmp_path / "garage.py"),
                          "--state", str(tmp_path / "state.json"), "--mode", "programmatic", "--full"],
                         capture_output=True, text=True, env=env, timeout=300, cwd=REPO)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    parked = [r["args"] for r in json.loads(out.stdout)["rounds"]
              if isinstance(r["observation"], dict) and r["observation"].get("success") is True]
    assert parked and all(a["plate"] == "KA-77" for a in parked)


def test_a_dict_marker_nested_in_another_dict_is_planned_from_not_a_crash() -> None:
    """rt12-C F5: a tuple-keyed dict marker under another dict of the state (EnvScaler's own save of
    `{'seats': {1: 'a', (2, 3): 'b'}}` inside `info`) ended the env's audit with "TypeError: expected string
    ... got 'tuple'": the whole env and its unrelated scenarios were rejected."""
    seats = {"__type__": "dict", "items": [[1, "a"], [key("B2", 3), "b"]]}
    nested = {"info": {"seats": seats}, "spots": CONFIG["spots"], "permits": CONFIG["permits"]}
    from envscaler_core.interop.jail_side import restore_markers
    from envscaler_core.validation.state_values import record_sets

    assert record_sets(restore_markers(nested)) is not None  # the probes' record sets of the restored state
    assert plan_tools(extract_tools(CODE, "Garage"), nested, ClassEffects(CODE, "Garage"))[0].positives()
