"""Spec: the programmatic pass, in the real sandbox, rejects a class whose queries or failed calls change
the state in ways that are easy to miss: a change that only JSON shows (1 -> true, 2 -> 2.0, 0.0 ->
-0.0), and a change made only on a later call of an episode or left behind by an earlier call."""

from __future__ import annotations

import asyncio

import pytest

from envscaler_core.config import Settings
from envscaler_core.models import EnvCandidate
from envscaler_core.synth import extract_tools
from envscaler_core.validation import validate_candidate

SETTINGS = Settings.model_validate({"validate": {"mode": "programmatic"}})
KINDS = {"list_books": "query", "get_book": "query", "lend_book": "state_change"}
STATE = {"books": {"b1": {"book_id": "b1", "copies": 2, "rating": 4.5, "fee": 0.0},
                   "b2": {"book_id": "b2", "copies": 0, "rating": 3.0, "fee": 0.0},
                   "b3": {"book_id": "b3", "copies": 1, "rating": 4.0, "fee": 0.0}},
         "loans": [{"book_id": "b2", "member": "Ana"}]}

SHELF = '''
class Library:
    def __init__(self, init_config: dict):
        self.books = {}
        self.loans = []

    def list_books(self) -> dict:
        """List every book."""
        #LIST
        return {"success": True, "data": list(self.books.values())}

    def get_book(self, book_id: str) -> dict:
        """Get one book.

        Args:
            book_id: the book id
        """
        if book_id not in self.books:
            return {"success": False, "error": "no such book"}
        book = self.books[book_id]
        #GET
        return {"success": True, "data": book}

    def lend_book(self, book_id: str, member: str) -> dict:
        """Lend a book to a member.

        Args:
            book_id: the book id
            member: member name
        """
        book = self.books.get(book_id)
        if book is None:
            return {"success": False, "error": "no such book"}
        if book["copies"] <= 0:
            #REFUSE
            return {"success": False, "error": "no copies left"}
        book["copies"] -= 1
        self.loans.append({"book_id": book_id, "member": member})
        #LENT
        return {"success": True, "message": "lent"}
'''


def shelf(**plants: str) -> str:
    code = SHELF
    for mark, line in plants.items():
        indent = " " * 8 if mark in ("LIST", "GET") else " " * 12 if mark == "REFUSE" else " " * 8
        code = code.replace(f"#{mark}", line.replace("\n", "\n" + indent))
    return code


def validate(code: str, runtime):
    candidate = EnvCandidate(topic_fp="t", class_name="Library", class_code=code,
                             tools=extract_tools(code, "Library"), tool_kinds=KINDS)
    return asyncio.run(validate_candidate(candidate, runtime, None, SETTINGS, test_state=STATE))


def test_the_unplanted_shelf_is_accepted(runtime) -> None:
    out = validate(shelf(), runtime)
    assert out.report.accepted, out.report


# -- changes only JSON shows ------------------------------------------------------------------------------
@pytest.mark.parametrize("plant", [
    'if book["copies"] in (0, 1): book["copies"] = bool(book["copies"])',  # 1 -> true
    'book["copies"] = float(book["copies"])',                                # 2 -> 2.0
    'book["fee"] = -book["fee"]',                                            # 0.0 -> -0.0
    'book["rating"] = int(book["rating"]) if book["rating"] == int(book["rating"]) else book["rating"]',  # 3.0 -> 3
], ids=["int-to-bool", "int-to-float", "sign-of-zero", "float-to-int"])
def test_a_query_making_a_change_python_calls_equal_rejects(runtime, plant: str) -> None:
    out = validate(shelf(GET=plant), runtime)
    assert not out.report.accepted
    assert "query tool get_book changed state" in out.report.critical, out.report.critical


def test_a_refusal_turning_zero_copies_into_false_rejects(runtime) -> None:
    out = validate(shelf(REFUSE='book["copies"] = False'), runtime)
    assert not out.report.accepted
    assert "lend_book reported failure but changed state" in out.report.critical, out.report.critical
