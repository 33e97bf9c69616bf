"""Spec: a check function runs with exactly the globals EnvScaler's `run_check_function` gives it:
`__builtins__` (the dict) and `initial_state`, nothing else. So `__name__` resolves through the builtins
to "builtins" there and here, and a check that reads it (or defines a class, whose `__module__` is
`__name__`) gets the verdict EnvScaler's reward gives it, on plain and on marker states alike."""

from __future__ import annotations

import json
from typing import Any

import pytest

from envscaler_core.models.interop import ImportedScenario
from envscaler_core.store import Store
from tests.interop.conftest import run_import, settings_for

CODE = '''class Shelf:
    def __init__(self, init_config: dict):
        self.books = {}

    def count(self) -> dict:
        """
        Count the books.

        Returns:
            dict: {"success": True, "data": int}
        """
        return {"success": True, "data": len(self.books)}
'''
ENV = {"env_id": "env_shelf", "environment_summary": "Shelf", "environment_introduction": "A shelf.",
       "state_space_definition": [], "constraints_rules": [], "env_class_name": "Shelf", "env_class_code": CODE,
       "operation_list": [{"operation_name": "count", "operation_description": "Count.", "operation_type": "query"}],
       "tools": [{"type": "function", "function": {"name": "count", "description": "Count the books.",
                                                   "parameters": {"type": "object", "properties": {}, "required": []}}}]}
READS_NAME = "def check_func(final_state):\n    return __name__ == 'builtins'"
DEFINES_CLASS = ("def check_func(final_state):\n    class Probe:\n        pass\n"
                 "    return Probe.__module__ == 'builtins'")
PLAIN = {"books": {"b1": {"title": "Dune"}}}
MARKED = {"books": {"b1": {"title": "Dune", "tags": {"__type__": "set", "items": ["sf"]}}}}


@pytest.fixture(scope="module")
def audits(tmp_path_factory: pytest.TempPathFactory, sandbox_pool: Any) -> dict[str, str]:
    tmp = tmp_path_factory.mktemp("check-globals")
    directory = tmp / "envscaler"
    directory.mkdir()
    (directory / "env_metadata.json").write_text(json.dumps({"env_shelf": ENV}))
    scenarios = [{"env_id": "env_shelf", "env_class_name": "Shelf", "task_id": f"{name}-{kind}", "init_config": config,
                  "task": "Count the books.", "checklist": ["c"], "checklist_with_func": [{"check_item": "c", "check_func": src}]}
                 for name, src in (("name", READS_NAME), ("class", DEFINES_CLASS))
                 for kind, config in (("plain", PLAIN), ("marked", MARKED))]
    (directory / "rl_scenario_metadata.json").write_text(json.dumps(scenarios))
    (directory / "sft_scenario_metadata.json").write_text("[]")
    settings = settings_for(tmp)
    run_import(directory, settings, sandbox_pool, run_id="globals")
    with Store.from_url(settings.store.url) as store:
        return {s.task_id: s.audit for s in store.query(ImportedScenario, run_id="globals")}


@pytest.mark.parametrize("state", ["plain", "marked"])
def test_a_check_reading_its_name_finds_builtins_as_in_envscaler(audits: dict[str, str], state: str) -> None:
    assert audits[f"name-{state}"] == "vacuous"  # True on the initial state, as EnvScaler's reward scores it


@pytest.mark.parametrize("state", ["plain", "marked"])
def test_a_class_defined_in_a_check_belongs_to_builtins_as_in_envscaler(audits: dict[str, str], state: str) -> None:
    assert audits[f"class-{state}"] == "vacuous"


def test_a_check_run_by_the_sandbox_sees_no_name_of_its_own(sandbox_pool: Any) -> None:
    [outcome] = sandbox_pool.run_checks(["def check_func(final_state):\n    return 'check' != __name__ == 'builtins'"],
                                        {}, {}, 5.0)
    assert outcome.passed is True, outcome.error
