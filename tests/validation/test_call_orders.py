"""Spec: the programmatic pass, in the real sandbox, runs the calls the probes saw in the orders agents
use (a state change then each query, a query then a state change, a refusal then a query, two refusals
in a row, a refusal then each state change, boundary refusals included) and rejects a class whose call
changes state, or leaves a change for a later call, only in such an order; a nondeterministic value
or a clock stamp excuses a difference only where it is one."""

from __future__ import annotations

import asyncio
import re

import pytest

from envscaler_core.config import Settings
from envscaler_core.models import EnvCandidate
from envscaler_core.synth import extract_tools
from envscaler_core.validation import validate_candidate
from envscaler_core.validation.state_match import clock_moment_later

SETTINGS = Settings.model_validate({"validate": {"mode": "programmatic"}})
KINDS = {"get_book": "query", "list_loans": "query", "lend_book": "state_change",
         "return_book": "state_change", "set_limit": "state_change", "add_note": "state_change"}
STATE = {"books": {"b1": {"title": "A", "copies": 50}, "b2": {"title": "B", "copies": 0}}, "loans": []}

LIBRARY = '''
import datetime, random, uuid


class Library:
    def __init__(self, init_config: dict):
        self.books = {}
        self.loans = []
        self.notes = {}
        self.limit = 5
        self._armed = 0
        self._prev = None

    def get_book(self, book_id: str) -> dict:
        """Get one book.

        Args:
            book_id: the book id
        """
        #GET
        self._prev = "get_book"
        if book_id not in self.books:
            return {"success": False, "error": "no such book"}
        return {"success": True, "data": self.books[book_id]}

    def list_loans(self) -> dict:
        """List every loan."""
        #LIST
        self._prev = "list_loans"
        return {"success": True, "data": list(self.loans)}

    def lend_book(self, book_id: str, member: str) -> dict:
        """Lend a book to a member.

        Args:
            book_id: the book id
            member: member name
        """
        book = self.books.get(book_id)
        if book is None or book["copies"] <= 0:
            #REFUSE
            self._prev = "refused"
            return {"success": False, "error": "no such book or no copies left"}
        book["copies"] -= 1
        loan = {"book_id": book_id, "member": member, "loan_id": "L%d" % len(self.loans)}
        self.loans.append(loan)
        #LENT
        self._prev = "lend_book"
        return {"success": True, "message": "lent"}

    def return_book(self, book_id: str) -> dict:
        """Put a lent copy back on the shelf.

        Args:
            book_id: the book id
        """
        book = self.books.get(book_id)
        if book is None:
            self._prev = "refused"
            return {"success": False, "error": "no such book"}
        book["copies"] += 1
        #RETURNED
        self._prev = "return_book"
        return {"success": True, "message": "returned"}

    def set_limit(self, value: int) -> dict:
        """Set the loan limit (1..100).

        Args:
            value: the new limit
        """
        if value < 1 or value > 100:
            #OUT_OF_RANGE
            self._prev = "refused"
            return {"success": False, "error": "out of range"}
        self.limit = value
        self._prev = "set_limit"
        return {"success": True, "message": "limit set"}
'''
NOTES = '''
    def add_note(self, text: str) -> dict:
        """Add a note.

        Args:
            text: the note
        """
        self.notes[str(uuid.uuid4())] = text
        return {"success": True, "message": "noted"}
'''


def library(notes: bool = False, **plants: str) -> str:
    code = LIBRARY + (NOTES if notes else "")
    for mark, lines in plants.items():
        indent = re.search(rf"\n( *)#{mark}\n", code).group(1)
        code = code.replace(f"#{mark}", lines.replace("\n", "\n" + indent))
    return code


def validate(code: str, runtime):
    candidate = EnvCandidate(topic_fp="t", class_name="Library", class_code=code,
                             tools=extract_tools(code, "Library"), tool_kinds=KINDS)
    return asyncio.run(validate_candidate(candidate, runtime, None, SETTINGS, test_state=STATE))


def rejected_in_sequence(out) -> str:
    rounds = [r for r in out.rounds if r.check == "sequence"]
    assert not out.report.accepted and len(rounds) == 1, (out.report, rounds)
    return rounds[0].reason


def test_the_unplanted_library_is_accepted(runtime) -> None:
    out = validate(library(), runtime)
    assert out.report.accepted, out.report


# -- F6: a state change then each query, a query then a state change ----------------------------------------
def test_a_query_that_changes_state_right_after_a_lend_rejects(runtime) -> None:
    code = library(LIST='if self._prev == "lend_book": self.books[self.loans[-1]["book_id"]]["copies"] -= 1')
    reason = rejected_in_sequence(validate(code, runtime))
    assert reason.startswith("query tool list_loans changed state"), reason
    assert "right after lend_book" in reason, reason


def test_a_return_that_refuses_but_shelves_a_copy_right_after_listing_the_loans_rejects(runtime) -> None:
    code = library(RETURNED='if self._prev == "list_loans":\n'
                            '    self._prev = None\n'
                            '    return {"success": False, "error": "desk closed"}')
    reason = rejected_in_sequence(validate(code, runtime))
    assert reason.startswith("return_book reported failure but changed state"), reason
    assert "right after list_loans" in reason, reason


# -- F5: a refusal then a query, two refusals in a row ---------------------------------------------------------
def test_a_query_that_changes_state_right_after_a_refusal_rejects(runtime) -> None:
    code = library(GET='if self._prev == "refused" and book_id in self.books: self.books[book_id]["copies"] -= 1')
    reason = rejected_in_sequence(validate(code, runtime))
    assert reason.startswith("query tool get_book changed state"), reason


def test_a_second_refusal_in_a_row_that_files_a_loan_rejects(runtime) -> None:
    code = library(REFUSE='if self._prev == "refused": self.loans.append({"book_id": "?", "member": "?"})')
    reason = rejected_in_sequence(validate(code, runtime))
    assert reason.startswith("lend_book reported failure but changed state"), reason


# -- F2: a change a refusal keeps back, for any state change -----------------------------------------------------
def test_a_refusal_whose_change_the_next_return_makes_rejects(runtime) -> None:
    code = library(REFUSE="self._armed = 1", RETURNED='book["copies"] += 10 * self._armed\nself._armed = 0')
    reason = rejected_in_sequence(validate(code, runtime))
    assert "changed state later on: return_book" in reason, reason


def test_a_boundary_refusal_whose_change_the_next_lend_makes_rejects(runtime) -> None:
    code = library(OUT_OF_RANGE="self._armed = 1", LENT='book["copies"] -= self._armed\nself._armed = 0')
    reason = rejected_in_sequence(validate(code, runtime))
    assert "changed state later on: lend_book" in reason, reason
    assert "set_limit" in reason, reason


# -- F1: nondeterminism excuses its own paths only ------------------------------------------------------------
ARM_ON_GET = "self._armed += 1"
TAKE_ARMED = 'book["copies"] -= self._armed\nself._armed = 0'


def test_random_loan_ids_alone_are_accepted(runtime) -> None:
    out = validate(library(LENT='loan["loan_id"] = "L%06d" % random.randrange(10**6)'), runtime)
    assert out.report.accepted, out.report


@pytest.mark.parametrize("loan_id", ['"L%06d" % random.randrange(10**6)', "datetime.datetime.now().isoformat()"],
                         ids=["random", "clock"])
def test_a_nondeterministic_loan_id_does_not_excuse_copies_the_queries_kept_back(runtime, loan_id: str) -> None:
    code = library(GET=ARM_ON_GET, LENT=f'loan["loan_id"] = {loan_id}\n{TAKE_ARMED}')
    assert "changed state later on: lend_book" in rejected_in_sequence(validate(code, runtime))


def test_a_uuid_another_tool_stores_does_not_excuse_copies_the_queries_kept_back(runtime) -> None:
    code = library(notes=True, GET=ARM_ON_GET, LENT=TAKE_ARMED)
    assert "changed state later on: lend_book" in rejected_in_sequence(validate(code, runtime))


def test_a_nondeterministic_loan_id_does_not_excuse_a_loan_the_queries_kept_back(runtime) -> None:
    code = library(GET=ARM_ON_GET, LENT='loan["loan_id"] = uuid.uuid4().hex\n'
                                        'if self._armed: self.loans.append({"book_id": "b2", "member": "ghost"})\n'
                                        'self._armed = 0')
    assert "changed state later on: lend_book" in rejected_in_sequence(validate(code, runtime))


# -- F3: a clock a moment later, and nothing else ---------------------------------------------------------------
def test_a_loan_stamped_with_the_time_of_day_is_accepted(runtime) -> None:
    out = validate(library(LENT='book["status"] = "on loan since " + datetime.datetime.now().strftime("%H:%M:%S")'),
                   runtime)
    assert out.report.accepted, out.report


def test_a_kept_back_change_in_a_string_holding_a_time_rejects(runtime) -> None:
    code = library(GET="self._armed = 1", LENT='book["status"] = ("OVERDUE, fine 50 EUR, since 00:00" if self._armed '
                                               'else "on loan, due 2026-12-10")\nself._armed = 0')
    assert "changed state later on: lend_book" in rejected_in_sequence(validate(code, runtime))


@pytest.mark.parametrize(("a", "b", "same"), [
    ("lent at 10:01:02", "lent at 10:01:03", True),
    ("2026-11-26T23:59:59.9", "2026-11-27T00:00:00.1", True),
    ("OVERDUE, fine 50 EUR, since 00:00", "on loan, due 2026-12-10", False),  # the text around differs
    ("due 2026-12-10", "due 2026-12-11", False),                              # a day is not a moment
    ("lent at 10:01:02", "lent at 13:01:02", False),                          # three hours neither
    ("v 10:01", "v 10:01:00", False),                                        # another form
], ids=["a-second-later", "past-midnight", "other-text", "a-day-later", "hours-later", "another-form"])
def test_a_clock_a_moment_later_is_the_same_text_a_moment_apart(a: str, b: str, same: bool) -> None:
    assert clock_moment_later(a, b, slack_s=2.0) is same
