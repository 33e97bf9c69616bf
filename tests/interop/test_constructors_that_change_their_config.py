"""Spec: a class whose constructor changes the config dict it is given loads as EnvScaler's runtime loads
it. EnvScaler constructs the class with a copy of the config and then sets every key of THAT SAME copy,
as the constructor left it, as an attribute: a key the constructor pops, deletes or clears is never set,
a key it re-assigns, updates or replaces is set to the constructor's value. Before, the import compared
the loaded state with the scenario's config, so `self.mode = init_config.pop("mode").upper()` made the
scenario `check_error` ("attribute 'mode' holds 'EXPRESS' after loading, but the config gives 'express'")
where EnvScaler scores it 1.0 (EnvScaler differential check, F4). Only a real loss, a `__setattr__` or
property swallowing what EnvScaler sets, is still a load error; and the reason says "did not load" once.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from envscaler_core.models.interop import ImportedScenario
from envscaler_core.store import Store
from tests.interop.conftest import run_import, settings_for, write_solutions

METHODS = '''
    def get_label(self) -> dict:
        """Get the shelf's label."""
        return {"success": True, "data": self.label}

    def add(self, name: str) -> dict:
        """Put an item on the shelf."""
        if name in self.items:
            return {"success": False, "error": "already there"}
        self.items[name] = 1
        return {"success": True, "message": f"{name} added"}
'''

# constructor body -> a check EnvScaler's runtime passes after add("b") (its state as ITS loader leaves it)
CONSTRUCTORS = {
    "pop": ('self.items = {}\n        self.label = init_config.pop("label").upper()',
            'final_state["label"] == "X" and "b" in final_state["items"]'),
    "del": ('self.items = {}\n        self.label = init_config["label"] * 2\n        del init_config["label"]',
            'final_state["label"] == "xx" and "b" in final_state["items"]'),
    "clear": ('self.items = dict(init_config["items"])\n        self.label = init_config["label"] + "!"\n'
              '        init_config.clear()',
              'final_state["label"] == "x!" and final_state["items"] == {"a": 1, "b": 1}'),
    "update": ('self.items = {}\n        init_config.update({"label": init_config["label"].upper(), "extra": 1})',
               'final_state["label"] == "X" and final_state["extra"] == 1 and "b" in final_state["items"]'),
    "reassign": ('self.items = {}\n        init_config["label"] = init_config["label"].title()',
                 'final_state["label"] == "X" and "b" in final_state["items"]'),
    "replace_nested": ('self.items = {}\n        init_config["items"] = {k: v * 10 for k, v in '
                       'init_config["items"].items()}',
                       'final_state["items"] == {"a": 10, "b": 1}'),
}

# a real loss: the constructor rewrites `label` in the config, and `__setattr__` drops what EnvScaler sets
SWALLOWS = ('object.__setattr__(self, "items", {})\n        object.__setattr__(self, "label", "kept")\n'
            '        if "label" in init_config:\n            init_config["label"] = init_config["label"].upper()\n\n'
            '    def __setattr__(self, name, value):\n        if name != "label":\n'
            '            object.__setattr__(self, name, value)',
            '"b" in final_state["items"]')


def _env(env_id: str, body: str) -> dict[str, Any]:
    code = f"class Shelf:\n    def __init__(self, init_config: dict):\n        {body}\n{METHODS}"
    tools = [{"type": "function", "function": {"name": "get_label", "description": "Get the label.", "parameters": {
        "type": "object", "properties": {}, "required": []}}},
             {"type": "function", "function": {"name": "add", "description": "Add an item.", "parameters": {
                 "type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}}}]
    return {"env_id": env_id, "environment_summary": "Shelf", "environment_introduction": "A shelf.",
            "state_space_definition": [], "constraints_rules": [], "env_class_name": "Shelf", "env_class_code": code,
            "operation_list": [{"operation_name": "get_label", "operation_description": "Get.", "operation_type": "query"},
                               {"operation_name": "add", "operation_description": "Add.",
                                "operation_type": "state_change"}],
            "tools": tools}


def _scenario(env_id: str, check: str) -> dict[str, Any]:
    return {"env_id": env_id, "env_class_name": "Shelf", "task_id": env_id, "init_config": {
        "items": {"a": 1}, "label": "x"}, "task": "Put b on the shelf.", "checklist": ["b is on the shelf"],
        "checklist_with_func": [{"check_func": f"def check_func(final_state):\n    return {check}"}]}


@pytest.fixture(scope="module")
def verdicts(tmp_path_factory: pytest.TempPathFactory, sandbox_pool: Any) -> dict[str, ImportedScenario]:
    """One import of a shelf per constructor, each scenario solved by add("b")."""
    tmp = tmp_path_factory.mktemp("ctor")
    directory = tmp / "envscaler"
    directory.mkdir()
    cases = {**CONSTRUCTORS, "swallows": SWALLOWS}
    (directory / "env_metadata.json").write_text(json.dumps({k: _env(k, body) for k, (body, _) in cases.items()}))
    (directory / "rl_scenario_metadata.json").write_text(json.dumps([_scenario(k, c) for k, (_, c) in cases.items()]))
    (directory / "sft_scenario_metadata.json").write_text("[]")
    write_solutions(directory, {k: [{"name": "add", "arguments": {"name": "b"}}] for k in cases})
    settings = settings_for(tmp)
    run_import(directory, settings, sandbox_pool, run_id="ctor")
    with Store.from_url(settings.store.url) as store:
        return {s.env_id: s for s in store.query(ImportedScenario, run_id="ctor")}


@pytest.mark.parametrize("kind", sorted(CONSTRUCTORS))
def test_a_constructor_that_changes_its_config_loads_as_envscaler_loads_it(
        verdicts: dict[str, ImportedScenario], kind: str) -> None:
    assert (verdicts[kind].audit, verdicts[kind].reasons) == ("verified", [])


def test_a_value_the_constructor_rewrote_and_the_class_swallowed_does_not_load(
        verdicts: dict[str, ImportedScenario]) -> None:
    verdict = verdicts["swallows"]
    assert verdict.audit == "check_error"
    assert verdict.reasons == ["initial state did not load: attribute 'label' holds 'kept' after loading, not the "
                               "value the constructor left for it in the config, which EnvScaler's runtime sets as "
                               "the attribute"]


def test_the_reason_says_it_did_not_load_once(verdicts: dict[str, ImportedScenario]) -> None:
    assert "does not load" not in " ".join(verdicts["swallows"].reasons)
