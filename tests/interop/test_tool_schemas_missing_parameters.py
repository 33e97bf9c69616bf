"""Spec: a tool schema that leaves out a parameter its method takes is fitted to the method's signature.

EnvScaler's runtime passes the agent's arguments to the method whatever the schema says, so a schema
without `parameters`, or one that omits `member_id`, still runs there. Imported, such a tool used to be
kept as written: `get_book` without `parameters` was served as taking no argument (`get_book(book_id=...)`
refused as unexpected, `get_book()` as missing book_id: never callable), and `lend_book` without
`member_id` got its env rejected as "coverage: lend_book was never called" (EnvScaler differential check,
F6). Now the missing parameters are added (the annotation's type, required as the signature says) and a
note names env, tool and parameter; where that cannot be done the env is rejected naming
`tools[<name>].parameters` and what is missing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from envscaler_core.gym import ScenarioEnv
from envscaler_core.models import AcceptedEnv, Scenario
from envscaler_core.models.interop import ImportedEnv, ImportedScenario
from envscaler_core.store import Store
from tests.interop.conftest import run_import, settings_for, write_one_scenario_dir

CODE = '''from typing import Dict


class Library:
    def __init__(self, init_config: dict):
        self.books: Dict[str, dict] = {}
        self.loans: list = []

    def get_book(self, book_id: str) -> dict:
        """Get a book by its id."""
        if book_id not in self.books:
            return {"success": False, "error": "Book not found"}
        return {"success": True, "data": self.books[book_id]}

    def lend_book(self, book_id: str, member_id: str, days: int = 14) -> dict:
        """Lend a book to a member."""
        book = self.books.get(book_id)
        if book is None or book["copies"] <= 0:
            return {"success": False, "error": "Book unavailable"}
        book["copies"] -= 1
        self.loans.append({"book_id": book_id, "member_id": member_id, "days": days})
        return {"success": True, "message": "lent"}
'''
GET_BOOK = {"type": "function", "function": {"name": "get_book", "description": "Get a book"}}  # no parameters
LEND_BOOK = {"type": "function", "function": {"name": "lend_book", "description": "Lend a book", "parameters": {
    "type": "object", "properties": {"book_id": {"type": "string"}}, "required": ["book_id"]}}}
OPS = [{"operation_name": "get_book", "operation_description": "Get.", "operation_type": "query"},
       {"operation_name": "lend_book", "operation_description": "Lend.", "operation_type": "state_change"}]
CONFIG = {"books": {"B1": {"title": "Dune", "copies": 1}}, "loans": []}
PLAN = [{"name": "lend_book", "arguments": {"book_id": "B1", "member_id": "M1"}}]


def _env(tools: list[dict[str, Any]], code: str = CODE) -> dict[str, Any]:
    return {"env_id": "env_lib", "environment_summary": "Library", "environment_introduction": "A library.",
            "state_space_definition": [], "constraints_rules": [], "env_class_name": "Library",
            "env_class_code": code, "operation_list": OPS, "tools": tools}


def _import(tmp: Path, pool: Any, env: dict[str, Any], run_id: str) -> dict[str, Any]:
    scenario = {"env_id": "env_lib", "env_class_name": "Library", "task_id": "t1", "init_config": CONFIG,
                "task": "Lend B1 to M1.", "checklist": ["B1 lent to M1"], "checklist_with_func": [{
                    "check_func": "def check_func(final_state):\n"
                                  "    return final_state['loans'] == [{'book_id': 'B1', 'member_id': 'M1', 'days': 14}]"}]}
    directory = write_one_scenario_dir(tmp / "envscaler", env, scenario, PLAN)
    settings = settings_for(tmp)
    report = run_import(directory, settings, pool, run_id=run_id)
    with Store.from_url(settings.store.url) as store:
        return {"report": report, "envs": store.query(ImportedEnv, run_id=run_id),
                "scenarios": store.query(ImportedScenario, run_id=run_id),
                "accepted": store.query(AcceptedEnv, run_id=run_id), "promoted": store.query(Scenario, run_id=run_id)}


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory, sandbox_pool: Any) -> dict[str, Any]:
    return _import(tmp_path_factory.mktemp("missing-params"), sandbox_pool, _env([GET_BOOK, LEND_BOOK]), "np")


def _params(imported: dict[str, Any], tool: str) -> dict[str, Any]:
    return next(t.function.parameters for t in imported["accepted"][0].tools if t.function.name == tool)


def test_a_tool_without_parameters_gets_its_methods_parameters(imported: dict[str, Any]) -> None:
    assert _params(imported, "get_book") == {"type": "object", "properties": {"book_id": {"type": "string"}},
                                             "required": ["book_id"]}


def test_a_required_parameter_missing_from_the_schema_is_added_as_required(imported: dict[str, Any]) -> None:
    params = _params(imported, "lend_book")
    assert params["properties"] == {"book_id": {"type": "string"}, "member_id": {"type": "string"},
                                    "days": {"type": "integer"}}
    assert params["required"] == ["book_id", "member_id"]


def test_the_env_is_accepted_and_its_scenario_verified(imported: dict[str, Any]) -> None:
    assert [(e.status, e.reasons) for e in imported["envs"]] == [("accepted", [])]
    assert [(s.audit, s.reasons) for s in imported["scenarios"]] == [("verified", [])]


def test_the_import_notes_name_env_tool_and_parameter(imported: dict[str, Any]) -> None:
    note = next(n for n in imported["report"].notes if "missing from their tool schemas" in n)
    assert note.startswith("env_metadata.json[env_lib]: 3 parameter(s) of the methods missing from their tool "
                           "schemas added (get_book.book_id (required), lend_book.member_id (required), "
                           "lend_book.days)")


def test_the_fitted_tool_can_be_called_in_the_gym(imported: dict[str, Any], sandbox_pool: Any) -> None:
    env = ScenarioEnv(imported["accepted"][0], imported["promoted"], sandbox_pool)
    try:
        env.reset(seed=0)
        obs, _, _, _, _ = env.step({"tool": "get_book", "args": {"book_id": "B1"}})
    finally:
        env.close()
    assert json.loads(obs) == {"success": True, "data": {"title": "Dune", "copies": 1}}


def test_a_schema_whose_properties_are_not_an_object_rejects_the_env_naming_it(
        tmp_path: Path, sandbox_pool: Any) -> None:
    broken = {"type": "function", "function": {"name": "lend_book", "description": "Lend", "parameters": {
        "type": "object", "properties": ["book_id"]}}}
    out = _import(tmp_path, sandbox_pool, _env([GET_BOOK, broken]), "np-bad")
    assert [(e.status, e.reasons) for e in out["envs"]] == [("rejected", [
        "tools[lend_book].parameters: 'properties' is a list, not an object, so the method's parameter(s) "
        "book_id, member_id, days cannot be added to it and no call could give them"])]


def test_a_required_positional_only_parameter_rejects_the_env_naming_the_schema(
        tmp_path: Path, sandbox_pool: Any) -> None:
    code = CODE.replace("def get_book(self, book_id: str)", "def get_book(self, book_id: str, /)")
    out = _import(tmp_path, sandbox_pool, _env([GET_BOOK, LEND_BOOK], code), "np-pos")
    [env] = out["envs"]
    assert env.status == "rejected"
    assert env.reasons == ["tools[get_book].parameters: the method's required parameter(s) book_id are "
                           "positional-only, which no call by name can fill (EnvScaler's runtime calls tools with "
                           "keywords only), so the tool can never run"]
