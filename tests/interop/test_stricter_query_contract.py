"""Spec: an imported env whose query (or refused call) changes the state stays rejected, since the
factory's data depends on that contract, but the rejection says that this contract is stricter than
EnvScaler's own LLM-judged stage 3 (whose runtime rewards such a class 1.0) and how to adapt the class:
bookkeeping in `_private` attributes, which the state leaves out (outside check 3, F1: a query writing an
access log, a public cache, an audit trail, a timestamp or a lazily created record was rejected with
only "query tool get_book changed state"). The adapted class is accepted."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from envscaler_core.interop.envjob import STRICTER_CONTRACT, judge_env
from envscaler_core.interop.read import read_envs
from tests.interop.conftest import settings_for

LIBRARY = '''
import time


class Library:
    def __init__(self, init_config: dict):
        self.books = {}
        self.loans = {}
        self.histories = {}
        self.access_log = []
        self.book_cache = {}
        self.last_query_at = 0.0

    def get_book(self, book_id: str) -> dict:
        """Get a book's details."""
        BOOKKEEPING
        if book_id not in self.books:
            return {"success": False, "error": "no such book"}
        return {"success": True, "data": self.books[book_id]}

    def lend_book(self, book_id: str, member: str) -> dict:
        """Lend an available book to a member."""
        book = self.books.get(book_id)
        if book is None or not book["available"]:
            return {"success": False, "error": "not available"}
        book["available"] = False
        self.loans[book_id] = member
        return {"success": True, "message": "lent"}
'''
PATTERNS = {  # what the outside check's five envs did in their query
    "log": "self.access_log.append(book_id)",
    "cache": "self.book_cache[book_id] = dict(self.books.get(book_id, {}))",
    "lazy record": "self.histories.setdefault(book_id, [])",
    "audit trail": "self.access_log.append({'op': 'get_book', 'book': book_id})",
    "timestamp": "self.last_query_at = time.time()",
}
STATE = {"books": {"b1": {"title": "Dune", "available": True}, "b2": {"title": "Emma", "available": False}}}


def _env(tmp_path: Path, code: str) -> Any:
    tools = [{"type": "function", "function": {"name": name, "description": name, "parameters": {
        "type": "object", "properties": {p: {"type": "string"} for p in params}, "required": params}}}
        for name, params in (("get_book", ["book_id"]), ("lend_book", ["book_id", "member"]))]
    record = {"env_id": "env_1", "environment_summary": "Library", "environment_introduction": "A library.",
              "state_space_definition": [], "constraints_rules": [], "env_class_name": "Library",
              "env_class_code": code, "tools": tools,
              "operation_list": [{"operation_name": "get_book", "operation_type": "query"},
                                 {"operation_name": "lend_book", "operation_type": "state_change"}]}
    path = tmp_path / "env_metadata.json"
    path.write_text(json.dumps({"env_1": record}))
    [env], _, _ = read_envs(path)
    return env


def _private(line: str) -> str:
    """The same bookkeeping in private attributes."""
    for name in ("access_log", "book_cache", "histories", "last_query_at"):
        line = line.replace(f"self.{name}", f"self._{name}")
    return line


@pytest.mark.parametrize("pattern", list(PATTERNS))
def test_a_query_that_keeps_books_is_rejected_with_the_contract_and_how_to_adapt(
        pattern: str, tmp_path: Path, sandbox_pool: Any) -> None:
    code = LIBRARY.replace("BOOKKEEPING", PATTERNS[pattern])
    outcome = judge_env(_env(tmp_path, code), STATE, None, sandbox_pool, settings_for(tmp_path), [])
    assert not outcome.accepted
    assert any("get_book" in r and "changed state" in r for r in outcome.reasons), outcome.reasons
    assert outcome.reasons[-1] == STRICTER_CONTRACT
    assert "stricter than EnvScaler's own stage 3" in STRICTER_CONTRACT and "`_private` attributes" in STRICTER_CONTRACT


@pytest.mark.parametrize("pattern", list(PATTERNS))
def test_the_same_bookkeeping_in_private_attributes_is_accepted(pattern: str, tmp_path: Path, sandbox_pool: Any) -> None:
    code = _private(LIBRARY.replace("BOOKKEEPING", PATTERNS[pattern]))
    outcome = judge_env(_env(tmp_path, code), STATE, None, sandbox_pool, settings_for(tmp_path), [])
    assert outcome.accepted, outcome.reasons


def test_a_refused_call_that_counts_failed_attempts_gets_the_same_advice(tmp_path: Path, sandbox_pool: Any) -> None:
    code = LIBRARY.replace("BOOKKEEPING", "pass").replace(
        'return {"success": False, "error": "not available"}',
        'self.last_query_at += 1\n            return {"success": False, "error": "not available"}')
    outcome = judge_env(_env(tmp_path, code), STATE, None, sandbox_pool, settings_for(tmp_path), [])
    assert any("lend_book reported failure but changed state" in r for r in outcome.reasons), outcome.reasons
    assert outcome.reasons[-1] == STRICTER_CONTRACT


def test_a_rejection_for_another_reason_gets_no_such_advice(tmp_path: Path, sandbox_pool: Any) -> None:
    code = LIBRARY.replace("BOOKKEEPING", "pass").replace('book = self.books.get(book_id)', 'book = None')
    outcome = judge_env(_env(tmp_path, code), STATE, None, sandbox_pool, settings_for(tmp_path), [])
    assert not outcome.accepted and STRICTER_CONTRACT not in outcome.reasons, outcome.reasons
