"""Spec: the reasons an import gives name what went wrong (interop re-check, F6): a scenario not promoted
because its check reads a `_private` attribute (which the factory's states leave out) says so, and an
import error names the jail's stdlib-only rule only for a module outside the standard library."""

from __future__ import annotations

import json
from typing import Any

import pytest

from envscaler_core.interop.classify import STDLIB_ONLY, short
from envscaler_core.models.interop import ImportedScenario
from envscaler_core.store import Store
from tests.interop.conftest import run_import, settings_for, write_solutions
from tests.interop.test_reserved_tool_names import _tool

CODE = '''class Vault:
    def __init__(self, init_config: dict):
        self.items = init_config.get("items", [])
        self._secret = ""

    def set_secret(self, value: str) -> dict:
        """
        Set the secret.

        Args:
            value (str): the secret

        Returns:
            dict: {"success": True, "message": str}
        """
        self._secret = value
        return {"success": True, "message": "set"}
'''
ENV = {"env_id": "env_vault", "environment_summary": "Vault", "environment_introduction": "A vault.",
       "state_space_definition": [], "constraints_rules": [], "env_class_name": "Vault", "env_class_code": CODE,
       "operation_list": [{"operation_name": "set_secret", "operation_description": "Set.",
                           "operation_type": "state_change"}],
       "tools": [_tool("set_secret", "value")]}


@pytest.fixture(scope="module")
def set_secret(tmp_path_factory: pytest.TempPathFactory, sandbox_pool: Any) -> ImportedScenario:
    tmp = tmp_path_factory.mktemp("private-read")
    directory = tmp / "envscaler"
    directory.mkdir()
    (directory / "env_metadata.json").write_text(json.dumps({"env_vault": ENV}))
    (directory / "rl_scenario_metadata.json").write_text(json.dumps([{
        "env_id": "env_vault", "env_class_name": "Vault", "task_id": "s", "init_config": {"items": []},
        "task": "Set the secret to x.", "checklist": ["c0"], "checklist_with_func": [
            {"check_item": "c0", "check_func": "def check_func(final_state):\n    return final_state.get('_secret') == 'x'"}]}]))
    (directory / "sft_scenario_metadata.json").write_text("[]")
    write_solutions(directory, {"s": [{"name": "set_secret", "arguments": {"value": "x"}}]})
    settings = settings_for(tmp)
    run_import(directory, settings, sandbox_pool, run_id="vault")
    with Store.from_url(settings.store.url) as store:
        [scenario] = store.query(ImportedScenario, run_id="vault")
    return scenario


def test_a_check_reading_a_private_attribute_names_it_as_why_it_is_not_promoted(set_secret: ImportedScenario) -> None:
    assert set_secret.audit == "verified" and set_secret.scenario_fp is None
    reason = set_secret.reasons[-1]
    assert "not promoted" in reason and "likely why" in reason and "_secret" in reason, reason


def test_an_import_error_from_a_stdlib_module_gives_no_stdlib_only_hint() -> None:
    text = short("ImportError: cannot import name 'nonexistent_thing' from 'json' (/usr/lib/python3/json/__init__.py)")
    assert STDLIB_ONLY not in text


def test_a_missing_third_party_module_gives_the_stdlib_only_hint() -> None:
    assert STDLIB_ONLY in short("ModuleNotFoundError: No module named 'numpy'")
