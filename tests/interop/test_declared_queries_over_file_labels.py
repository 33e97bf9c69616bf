"""Spec: a tool whose name or docstring declares a query is judged as a query even when the file's
`operation_list` labels it `state_change`, with a note naming the disagreement (docs/validation.md: "the
declared purpose wins: get_book whose body also bumps a counter is a query that changes state").

rt11-B F7: `get_book` ("Get a book's record by id.") that lends b1 on every call, labelled `state_change` in
the file, was accepted and its scenario verified, and a trajectory that only looked the book up scored 1.0.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from envscaler_core.interop.read import read_envs
from envscaler_core.models.interop import ImportedEnv
from envscaler_core.store import Store
from tests.fixtures.lending import library
from tests.interop.conftest import run_import, settings_for, write_scenarios_dir
from tests.interop.test_a_breach_on_any_tested_state import ENV, _scenario

LENDING_LOOKUP = library('''
    def get_book(self, book_id: str) -> dict:
        """Get a book's record by id."""
        if book_id not in self.books:
            return {"success": False, "error": "no such book"}
        self.loans[book_id] = "Ana"
        return {"success": True, "data": self.books[book_id]}''')
MISLABELLED = {**ENV, "env_id": "env_mislabelled", "env_class_code": LENDING_LOOKUP,
               "operation_list": [{"operation_name": "get_book", "operation_type": "state_change"},
                                  {"operation_name": "lend_book", "operation_type": "state_change"}]}
PLAIN = {"books": {"b1": {"title": "Dune", "status": "ok"}}, "loans": {}}
LEND = [{"name": "lend_book", "arguments": {"book_id": "b1", "member": "Ana"}}]


def _directory(tmp_path: Path, env: dict[str, Any]) -> Path:
    records = [{**_scenario("t1", PLAIN), "env_id": env["env_id"]}]
    return write_scenarios_dir(tmp_path / "in", env["env_id"], env, records, {"t1": LEND})


def test_a_tool_declared_a_query_is_read_as_one_whatever_its_file_label_with_a_note(tmp_path: Path) -> None:
    [env], problems, _ = read_envs(_directory(tmp_path, MISLABELLED) / "env_metadata.json")
    assert not problems
    assert env.tool_kinds == {"get_book": "query", "lend_book": "state_change"}
    assert any("get_book" in n and "state_change" in n and "query" in n for n in env.notes), env.notes


def test_only_a_declared_query_overrides_the_file_label(tmp_path: Path) -> None:
    """`lend_book` labelled `query` in the file stays a query: that is the stricter reading (a query must
    change nothing), so the file may make a tool stricter, never laxer than its name declares."""
    ops = [{"operation_name": "get_book", "operation_type": "query"},
           {"operation_name": "lend_book", "operation_type": "query"}]
    [env], _, _ = read_envs(_directory(tmp_path, {**MISLABELLED, "operation_list": ops}) / "env_metadata.json")
    assert env.tool_kinds == {"get_book": "query", "lend_book": "query"}
    assert not any("declare" in n for n in env.notes), env.notes


def test_a_lookup_that_writes_labelled_state_change_in_the_file_rejects_the_env(
        tmp_path: Path, sandbox_pool: Any) -> None:
    settings = settings_for(tmp_path)
    run_import(_directory(tmp_path, MISLABELLED), settings, sandbox_pool, run_id="imp")
    with Store.from_url(settings.store.url) as store:
        [env] = store.query(ImportedEnv, run_id="imp")
    assert env.status == "rejected"
    assert any("query tool get_book changed state" in r for r in env.reasons), env.reasons


def _renamed(name: str, doc: str) -> dict[str, Any]:
    """MISLABELLED with its lending lookup renamed `name`, documented `doc`, still labelled state_change."""
    code = LENDING_LOOKUP.replace("def get_book(", f"def {name}(").replace("Get a book's record by id.", doc)
    tools = [t if t["function"]["name"] != "get_book" else {**t, "function": {**t["function"], "name": name}}
             for t in MISLABELLED["tools"]]
    return {**MISLABELLED, "env_class_code": code, "tools": tools,
            "operation_list": [{"operation_name": name, "operation_type": "state_change"},
                               {"operation_name": "lend_book", "operation_type": "state_change"}]}


# rt12-C F8: a docstring declaring a lookup in other words, or a name whose first word may be a noun, kept
# the file's `state_change` label, and a lookup-only trajectory scored 1.0 in the gym.
@pytest.mark.parametrize(("name", "doc"), [
    ("book_details", "Get the details of a book."),
    ("book_record", "Returns a book's record without changing anything."),
    ("book_info", "Return the details of a book (read-only)."),
    ("book", "Fetch a book by id."),
])
def test_a_lookup_declared_by_its_docstring_alone_is_read_as_a_query(tmp_path: Path, name: str, doc: str) -> None:
    [read], _, _ = read_envs(_directory(tmp_path, _renamed(name, doc)) / "env_metadata.json")
    assert read.tool_kinds[name] == "query", read.notes


@pytest.mark.parametrize(("name", "doc"), [("archive_book", "Archive a book without changing anything else."),
                                           ("set_note", "Set a note on a book (the book id itself is read-only).")])
def test_a_change_whose_docstring_says_read_only_of_something_else_keeps_its_label(
        tmp_path: Path, name: str, doc: str) -> None:
    """rt13 F5: "read-only" anywhere overruled the label of a tool named by a changing verb; the env was
    rejected although its reference solution, which calls the tool, is what EnvScaler pays."""
    [read], _, _ = read_envs(_directory(tmp_path, _renamed(name, doc)) / "env_metadata.json")
    assert read.tool_kinds[name] == "state_change", read.notes


def test_a_change_whose_docstring_starts_with_a_lookup_verb_keeps_its_label(tmp_path: Path) -> None:
    """`reserve_ticket`, "Get a free ticket number and reserve it.": the name's verb is no noun, so name and
    docstring disagree and the file's label stands (a false rejection costs a sound env)."""
    env = _renamed("reserve_ticket", "Get a free ticket number and reserve it.")
    [read], _, _ = read_envs(_directory(tmp_path, env) / "env_metadata.json")
    assert read.tool_kinds["reserve_ticket"] == "state_change", read.notes
