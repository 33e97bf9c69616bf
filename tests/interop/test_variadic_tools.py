"""Spec: tools with `**kwargs` or `*args` are offered, checked and probed the way EnvScaler's runtime
calls them, `getattr(env, name)(**arguments)`, by every entry point (outside check F5):

* `**fields` takes any further keyword by its own name (`email=...`): the schema allows additional
  properties, has no property `fields` (step6 writes one; sent, it lands in the method as the key
  "fields"), and the probes send fields the records hold, those the code spells out first;
* `*tags` can never be filled by a keyword (`tags=[...]` is a TypeError there): it is no parameter.

Before, `validate` refused such a class as a static problem (exit 2), and the import kept step6's
`fields`/`tags` properties, so update_patient was only ever sent `fields=...` and add_tags was never
called: both envs were rejected though EnvScaler scores their reference solution 1.0."""

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
from tests.interop.conftest import run_import, settings_for, write_one_scenario_dir

REPO = Path(__file__).resolve().parents[2]

CODE = '''from typing import Any, Dict, List


class Clinic:
    def __init__(self, init_config: dict):
        self.patients: List[Dict[str, Any]] = []

    def _patient(self, patient_id: str):
        return next((p for p in self.patients if p["patient_id"] == patient_id), None)

    def get_patient(self, patient_id: str) -> dict:
        """Get a patient."""
        p = self._patient(patient_id)
        if p is None:
            return {"success": False, "error": "patient not found"}
        return {"success": True, "data": p}

    def update_patient(self, patient_id: str, **fields) -> dict:
        """Update the phone or email of a patient."""
        p = self._patient(patient_id)
        if p is None:
            return {"success": False, "error": "patient not found"}
        bad = [k for k in fields if k not in {"phone", "email"}]
        if bad or not fields:
            return {"success": False, "error": f"cannot update {bad}"}
        p.update(fields)
        return {"success": True, "message": "updated"}

    def add_tags(self, patient_id: str, *tags: str) -> dict:
        """Add tags to a patient."""
        p = self._patient(patient_id)
        if p is None:
            return {"success": False, "error": "patient not found"}
        p.setdefault("tags", []).extend(tags)
        return {"success": True, "message": f"{len(tags)} tags added"}
'''
STATE = {"patients": [{"patient_id": "P1", "name": "Eva", "phone": "555-1", "email": None},
                      {"patient_id": "P2", "name": "Tom", "phone": "555-2", "email": "tom@x.org"}]}


def _step6_tool(name: str, props: dict[str, Any]) -> dict[str, Any]:
    """As EnvScaler's step6 writes it: the variadic parameters as ordinary required properties."""
    return {"type": "function", "function": {"name": name, "description": name, "parameters": {
        "type": "object", "properties": props, "required": list(props)}}}


ENV = {"env_id": "env_clinic", "environment_summary": "Clinic", "environment_introduction": "A clinic.",
       "state_space_definition": [], "constraints_rules": [], "env_class_name": "Clinic", "env_class_code": CODE,
       "operation_list": [{"operation_name": "get_patient", "operation_type": "query"},
                          {"operation_name": "update_patient", "operation_type": "state_change"},
                          {"operation_name": "add_tags", "operation_type": "state_change"}],
       "tools": [_step6_tool("get_patient", {"patient_id": {"type": "string"}}),
                 _step6_tool("update_patient", {"patient_id": {"type": "string"}, "fields": {"type": "string"}}),
                 _step6_tool("add_tags", {"patient_id": {"type": "string"}, "tags": {"type": "string"}})]}
CHECK = "def check_func(final_state):\n    return final_state['patients'][0]['email'] == 'eva@moss.io'"


def test_the_schema_allows_further_keywords_for_kwargs_and_has_no_parameter_for_args() -> None:
    tools = {t.function.name: t.function.parameters for t in extract_tools(CODE, "Clinic")}
    assert tools["update_patient"] == {"type": "object", "properties": {"patient_id": {"type": "string"}},
                                       "required": ["patient_id"], "additionalProperties": True}
    assert tools["add_tags"] == {"type": "object", "properties": {"patient_id": {"type": "string"}},
                                 "required": ["patient_id"]}


def test_validate_accepts_the_class_and_updates_a_field_the_code_allows(tmp_path: Path) -> None:
    (tmp_path / "clinic.py").write_text(CODE)
    (tmp_path / "state.json").write_text(json.dumps(STATE))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ENVSCALER_"))}
    out = subprocess.run([sys.executable, "-m", "envscaler.cli", "validate", "--code", str(tmp_path / "clinic.py"),
                          "--state", str(tmp_path / "state.json"), "--mode", "programmatic", "--full"],
                         capture_output=True, text=True, env=env, timeout=300, cwd=REPO)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    updated = [r["args"] for r in json.loads(out.stdout)["rounds"] if r["tool"] == "update_patient"
               and isinstance(r["observation"], dict) and r["observation"].get("success") is True]
    assert updated and set(updated[0]) - {"patient_id"} <= {"phone", "email"}, updated


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory, sandbox_pool: Any) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("variadic")
    scenario = {"env_id": "env_clinic", "env_class_name": "Clinic", "task_id": "c1", "init_config": STATE,
                "task": "Set Eva's email to eva@moss.io.", "checklist": ["email set"],
                "checklist_with_func": [{"check_item": "email set", "check_func": CHECK}]}
    directory = write_one_scenario_dir(tmp / "envscaler", ENV, scenario, [
        {"name": "update_patient", "arguments": {"patient_id": "P1", "email": "eva@moss.io"}}])
    settings = settings_for(tmp)
    report = run_import(directory, settings, sandbox_pool, run_id="variadic")
    with Store.from_url(settings.store.url) as store:
        return {"report": report, "envs": store.query(ImportedEnv, run_id="variadic"),
                "scenarios": store.query(ImportedScenario, run_id="variadic")}


def test_an_imported_env_with_variadic_tools_is_accepted(imported: dict[str, Any]) -> None:
    assert [(e.status, e.reasons) for e in imported["envs"]] == [("accepted", [])]


def test_its_reference_solution_passing_a_field_by_name_verifies_the_scenario(imported: dict[str, Any]) -> None:
    assert [s.audit for s in imported["scenarios"]] == ["verified"], imported["scenarios"][0].reasons
