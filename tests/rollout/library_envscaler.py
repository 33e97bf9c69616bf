"""A lending library in EnvScaler's own files, imported through the real importer, whose `lend_book` can
leave EnvScaler's runtime a result or a state our JSON wire cannot carry, or raise after changing the state
(differential re-check 2026-11-26, F1/F2/F6). The rewards and states the specs expect are what EnvScaler's
runtime (interact_with_env/envscaler_env, `EnvScalerNonConvRLEnv.step`) gave on these very files, run by
hand when the specs were written (see each spec)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from envscaler_core.config import Settings
from envscaler_core.models import AcceptedEnv, Scenario
from envscaler_core.store import Store
from tests.interop.conftest import run_import, settings_for, write_one_scenario_dir

LIBRARY_CODE = '''
class Opaque:
    pass


class BadRepr:
    def __repr__(self):
        raise ValueError("no text for this object")


class Library:
    def __init__(self, config):
        self.books = config.get("books", {})
        self.members = config.get("members", {})

    def get_book(self, book_id: str) -> dict:
        """Look up a book."""
        if book_id not in self.books:
            return {"success": False, "error": "no such book"}
        return {"success": True, "data": self.books[book_id]}

    def lend_book(self, book_id: str, member_id: str, note: str = "") -> dict:
        """Lend a book to a member."""
        b = self.books.get(book_id)
        if b is None or member_id not in self.members:
            return {"success": False, "error": "no such book or member"}
        if b["status"] != "available":
            return {"success": False, "error": "not available"}
        b["status"] = "lent"
        b["holder"] = member_id
        if note == "BOOM":
            raise RuntimeError("ledger write failed")
        if note == "OPAQUE":
            return {"success": True, "ref": Opaque()}
        if note == "BADREPR":
            return {"success": True, "r": BadRepr()}
        if note == "KEEP":
            self.ref = Opaque()
        return {"success": True}
'''


def _tool(name: str, props: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "description": name, "parameters": {
        "type": "object", "properties": props, "required": required}}}


S = {"type": "string"}
ENV = {
    "env_id": "env_lib", "environment_summary": "Library", "environment_introduction": "A lending library.",
    "state_space_definition": [], "constraints_rules": [], "operation_list": [], "env_class_name": "Library",
    "env_class_code": LIBRARY_CODE, "env_class_def": "", "env_structure": {},
    "tools": [_tool("get_book", {"book_id": S}, ["book_id"]),
              _tool("lend_book", {"book_id": S, "member_id": S, "note": S}, ["book_id", "member_id", "note"])],
}

SCENARIO = {
    "env_id": "env_lib", "env_class_name": "Library", "task_id": "L1",
    "init_config": {"books": {"b1": {"title": "Dune", "status": "available"}}, "members": {"m1": {"name": "Ann"}}},
    "task": "Lend book b1 to member m1.",
    "checklist": ["b1 lent to m1"],
    "checklist_with_func": [{"check_func": "def check_func(final_state):\n    b = final_state['books']['b1']\n"
                                           "    return b['status'] == 'lent' and b.get('holder') == 'm1'"}],
}


def call(name: str, **args: Any) -> dict[str, Any]:
    return {"name": name, "arguments": args}


LEND = call("lend_book", book_id="b1", member_id="m1")
SOLUTION = [LEND]
OPAQUE = call("lend_book", book_id="b1", member_id="m1", note="OPAQUE")
BADREPR = call("lend_book", book_id="b1", member_id="m1", note="BADREPR")
BOOM = call("lend_book", book_id="b1", member_id="m1", note="BOOM")
KEEP = call("lend_book", book_id="b1", member_id="m1", note="KEEP")


def import_library(tmp: Path, runtime: Any, run_id: str = "library") -> tuple[Settings, AcceptedEnv, Scenario]:
    """The library's EnvScaler files written to `tmp`, imported into a fresh store; the accepted env and its
    verified scenario as the store holds them."""
    directory = write_one_scenario_dir(tmp / "envscaler", ENV, SCENARIO, SOLUTION)
    settings = settings_for(tmp)
    report = run_import(directory, settings, runtime, run_id=run_id)
    with Store.from_url(settings.store.url) as store:
        envs = store.query(AcceptedEnv, run_id=run_id)
        scenarios = [s for s in store.query(Scenario, run_id=run_id) if s.status == "verified"]
    assert len(envs) == 1 and len(scenarios) == 1, report
    return settings, envs[0], scenarios[0]
