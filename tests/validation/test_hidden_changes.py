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
KINDS = {"list_books": "query", "get_book": "query", "lend_book": "state_change", "return_book": "state_change"}
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

    def return_book(self, book_id: str, member: str) -> dict:
        """Take a lent book back.

        Args:
            book_id: the book id
            member: member name
        """
        loan = {"book_id": book_id, "member": member}
        if loan not in self.loans:
            return {"success": False, "error": "no such loan"}
        self.loans.remove(loan)
        self.books[book_id]["copies"] += 1
        return {"success": True, "message": "returned"}
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


# -- changes a later call shows -----------------------------------------------------------------------------
def sequence_breach(out) -> str:
    rounds = [r for r in out.rounds if r.check == "sequence"]
    assert not out.report.accepted and len(rounds) == 1, (out.report, rounds)
    assert rounds[0].reason in out.report.critical
    return rounds[0].reason


def test_a_query_that_changes_state_only_from_its_second_call_rejects(runtime) -> None:
    code = shelf(GET='self._asked = getattr(self, "_asked", 0) + 1\nif self._asked >= 2: book["copies"] = 99')
    reason = sequence_breach(validate(code, runtime))
    assert reason.startswith("query tool get_book changed state (call "), reason


def test_a_refusal_whose_change_the_next_query_makes_rejects(runtime) -> None:
    code = shelf(REFUSE='self._owed = {"book_id": book_id, "member": member}',
                 LIST='if getattr(self, "_owed", None): self.loans.append(self._owed); self._owed = None')
    reason = sequence_breach(validate(code, runtime))
    assert reason.startswith("query tool "), reason


def test_a_refusal_whose_change_the_next_successful_lend_makes_rejects(runtime) -> None:
    code = shelf(REFUSE='self._owed = {"book_id": book_id, "member": member}',
                 LENT='if getattr(self, "_owed", None): self.loans.append(self._owed); self._owed = None')
    reason = sequence_breach(validate(code, runtime))
    assert reason.startswith(("a refused call changed state later on: lend_book",
                              "a refused call or a query changed state later on: lend_book")), reason
    assert "right after lend_book {'book_id': 'b2'" in reason, reason


def test_a_query_whose_thread_changes_state_after_the_reply_rejects(runtime) -> None:
    code = "import threading, time\n" + shelf(GET=(
        'threading.Thread(target=lambda: (time.sleep(0.02), book.update(copies=book["copies"] + 5))).start()'))
    assert not validate(code, runtime).report.accepted


def test_a_query_whose_finaliser_changes_state_in_a_later_state_change_rejects(runtime) -> None:
    code = "import gc\n" + SHELF.replace('''class Library:''', '''class Trace:
    def __init__(self, book):
        self.book, self.cycle = book, self

    def __del__(self):
        self.book["copies"] += 10


class Library:''')
    code = code.replace("#GET", "Trace(book)").replace("#LENT", "gc.collect()").replace("#LIST", "").replace(
        "#REFUSE", "pass")
    reason = sequence_breach(validate(code, runtime))
    assert "changed state" in reason, reason


def test_a_query_whose_change_from_its_second_call_on_a_later_lend_makes_rejects(runtime) -> None:
    code = shelf(GET='self._asked = getattr(self, "_asked", 0) + 1\n'
                     'if self._asked >= 2: self._owed = {"book_id": book_id, "member": "audit"}',
                 LENT='if getattr(self, "_owed", None): self.loans.append(self._owed); self._owed = None')
    reason = sequence_breach(validate(code, runtime))
    assert reason.startswith("a refused call or a query changed state later on: lend_book"), reason
    assert "queries: " in reason, reason



# -- the stored reason of an exception ----------------------------------------------------------------------
@pytest.mark.parametrize("message", [  # as written in the env's code: Python escapes, which the env interprets
    r"boom \x1b]0;TITLE\x07\x1b[2J\x1b[31mRED\r\x1b[Kfake: ACCEPTED \u202e txt",
    r"first\u2028fake: ACCEPTED", r"first\nsecond line\n  File \"x\"\nfake: ACCEPTED", r"\r\n",
], ids=["ansi-and-cr", "line-separator", "newlines", "blank"])
def test_an_exception_reason_keeps_its_type_whatever_its_message_holds(runtime, message: str) -> None:
    out = validate(shelf(LENT=f'raise LookupError("{message}")'), runtime)
    reasons = [c for c in out.report.critical if c.startswith("exception in lend_book")]
    assert reasons and all(c.startswith("exception in lend_book: LookupError:") for c in reasons), out.report.critical
    assert not any(ch in c for c in reasons for ch in "\x1b\r\n\u2028\u202e\x07")  # shown escaped, on one line
