"""Spec (red team round 5, F2): one env whose loads start timing out while it is probed is rejected,
naming the load failure, and the import goes on: the other envs and their scenarios are stored as
usual (an unhandled EnvLoadError used to end the import with nothing stored)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from envscaler_core.models.interop import ImportedEnv, ImportedScenario
from envscaler_core.store import Store
from tests.interop.conftest import FILES, run_import, settings_for
from tests.validation.test_loads_that_fail_mid_probing import hangs_after

SHOP = '''
class Shop:
    def __init__(self, init_config: dict):
        self.items = {}

    def get_item(self, item_id: str) -> dict:
        """Get an item by id."""
        it = self.items.get(item_id)
        if it is None:
            return {"success": False, "error": "no such item"}
        return {"success": True, "data": dict(it)}
'''
ONE_TOOL = {"type": "object", "properties": {"book_id": {"type": "string"}}, "required": ["book_id"]}


def _env(env_id: str, class_name: str, code: str, tools: dict[str, dict[str, Any]]) -> dict[str, Any]:
    return {"env_id": env_id, "environment_summary": env_id, "environment_introduction": env_id,
            "state_space_definition": [], "constraints_rules": [], "env_class_name": class_name,
            "env_class_code": code, "env_class_def": "", "env_structure": "",
            "operation_list": [{"operation_name": n, "operation_type": "query"} for n in tools],
            "tools": [{"type": "function", "function": {"name": n, "description": n, "parameters": p}}
                      for n, p in tools.items()]}


def test_the_other_envs_are_imported_when_one_envs_loads_time_out_while_probed(tmp_path: Path,
                                                                                sandbox_pool: Any) -> None:
    warm = sandbox_pool.open_episode(SHOP, "Shop", {})
    warm.close()
    item = {"type": "object", "properties": {"item_id": {"type": "string"}}, "required": ["item_id"]}
    envs = {"env_s": _env("env_s", "Shop", SHOP, {"get_item": item}),
            "env_late": _env("env_late", "Lib", hangs_after(time.time() + 2.0),
                             {"get_book": ONE_TOOL, "lend_book": ONE_TOOL})}
    scenario = {"env_id": "env_s", "env_class_name": "Shop", "task_id": "t1", "task": "Look at i1.",
                "init_config": {"items": {"i1": {"item_id": "i1", "stock": 3}}}, "checklist": ["i1 kept"],
                "checklist_with_func": [{"check_item": "i1 kept", "check_func":
                                         "def check_func(final_state):\n    return 'i1' in final_state['items']\n"}]}
    books = {"env_id": "env_late", "env_class_name": "Lib", "task_id": "t2", "task": "Lend b1.",
             "init_config": {"books": {"b1": {"title": "Dune", "available": True}}}, "checklist": ["lent"],
             "checklist_with_func": [{"check_item": "lent", "check_func":
                                      "def check_func(final_state):\n    return True\n"}]}
    directory = tmp_path / "files"
    directory.mkdir()
    (directory / FILES[0]).write_text(json.dumps(envs))
    (directory / FILES[1]).write_text(json.dumps([scenario, books]))
    (directory / FILES[2]).write_text("[]")
    settings = settings_for(tmp_path)

    run_import(directory, settings, sandbox_pool, run_id="late")

    with Store.from_url(settings.store.url) as store:
        stored = {e.env_id: e for e in store.query(ImportedEnv, run_id="late")}
        scenarios = store.query(ImportedScenario, run_id="late")
    audits = {s.env_id: s.audit for s in scenarios}
    assert stored["env_s"].status == "accepted" and audits == {"env_s": "vacuous", "env_late": "env_rejected"}
    assert stored["env_late"].status == "rejected"
    assert any("loading Lib failed: timeout" in r for r in stored["env_late"].reasons), stored["env_late"].reasons
