"""Spec: an imported env whose class breaks the contract on any of the scenario states it is validated on
is rejected, whatever the other states show (sandbox red team 8, F3). The attacker writes the scenario
file too: a decoy scenario whose state never reaches the defect got such an env accepted ("the first
state that passes accepts it"), and its real scenario verified and exported."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from envscaler_core.models.interop import ImportedEnv, ImportedScenario
from envscaler_core.store import Store
from tests.fixtures.lending import library
from tests.interop.conftest import run_import, settings_for, write_scenarios_dir

LIBRARY = library('''
    def get_book(self, book_id: str) -> dict:
        if book_id not in self.books:
            return {"success": False, "error": "no such book"}
        if self.books[book_id].get("status") == "lost":
            self.lost_reports.append(book_id)
        return {"success": True, "data": self.books[book_id]}''', "lost_reports")
LENT = "def check_func(final_state):\n    return final_state['loans'].get('b1') == 'Ana'\n"
REAL = {"books": {"b1": {"title": "Dune", "status": "ok"}, "b2": {"title": "Emma", "status": "lost"}},
        "loans": {}, "lost_reports": []}
DECOYS = [{"books": {"b1": {"title": f"Dune {k}", "status": "ok"}}, "loans": {}, "lost_reports": []} for k in range(2)]


def _tool(name: str, params: list[str]) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "description": name, "parameters": {
        "type": "object", "properties": {p: {"type": "string"} for p in params}, "required": params}}}


ENV = {"env_id": "env_lost", "environment_summary": "a library", "environment_introduction": "A small library.",
       "state_space_definition": [], "constraints_rules": [], "env_class_name": "Library", "env_class_code": LIBRARY,
       "operation_list": [{"operation_name": "get_book", "operation_type": "query"},
                          {"operation_name": "lend_book", "operation_type": "state_change"}],
       "tools": [_tool("get_book", ["book_id"]), _tool("lend_book", ["book_id", "member"])]}


def _scenario(task_id: str, config: dict[str, Any]) -> dict[str, Any]:
    return {"env_id": "env_lost", "env_class_name": "Library", "task_id": task_id, "init_config": config,
            "task": "Lend b1 to Ana.", "checklist": ["lent"],
            "checklist_with_func": [{"check_item": "lent", "check_func": LENT}]}


@pytest.mark.parametrize("decoys", [0, 1, 2], ids=["alone", "one-decoy", "two-decoys"])
def test_a_query_changing_state_on_one_scenarios_state_rejects_the_env_whatever_the_others(
        tmp_path: Path, sandbox_pool: Any, decoys: int) -> None:
    records = [_scenario("real", REAL)] + [_scenario(f"decoy-{k}", DECOYS[k]) for k in range(decoys)]
    plan = [{"name": "lend_book", "arguments": {"book_id": "b1", "member": "Ana"}}]
    directory = write_scenarios_dir(tmp_path / "in", "env_lost", ENV, records,
                                    {str(r["task_id"]): plan for r in records})
    settings = settings_for(tmp_path)
    run_import(directory, settings, sandbox_pool, run_id="lost")
    with Store.from_url(settings.store.url) as store:
        [env] = store.query(ImportedEnv, run_id="lost")
        audits = {s.task_id: s.audit for s in store.query(ImportedScenario, run_id="lost")}
    assert env.status == "rejected", audits
    assert any("query tool get_book changed state" in r for r in env.reasons), env.reasons
    assert set(audits.values()) == {"env_rejected"}, audits
