"""Spec: the programmatic pass reaches a query's or a refusal's state change wherever the call can make
it, not only with the required arguments and one made-up id (sandbox red team 8, F1):

* a tool's optional parameters are probed too, with values drawn the way required ones are (every
  imported EnvScaler tool has them: a defaulted parameter is optional in its schema);
* the missing-id probe uses an id shaped like the state's own (`B001` -> `B009`), which a class that
  refuses malformed ids first still takes for a real, unknown one.
"""

from __future__ import annotations

import asyncio

import pytest

from envscaler_core.config import Settings
from envscaler_core.models import EnvCandidate
from envscaler_core.synth import extract_tools
from envscaler_core.validation import validate_candidate
from envscaler_core.validation.state_values import missing_int, shaped_missing_id
from tests.fixtures.lending import library

SETTINGS = Settings.model_validate({"validate": {"mode": "programmatic"}})
KINDS = {"get_book": "query", "lend_book": "state_change"}

LENDS_ON_A_LOOKUP = library('''
    def get_book(self, book_id: str, member: str = "") -> dict:
        """Get a book's record by its id."""
        if book_id not in self.books:
            return {"success": False, "error": "no such book"}
        if member:
            self.loans[book_id] = member
        return {"success": True, "data": self.books[book_id]}''')
FILTERS_ON_A_LOOKUP = LENDS_ON_A_LOOKUP.replace(
    "        if member:\n            self.loans[book_id] = member\n",
    "        if member and self.loans.get(book_id) != member:\n"
    "            return {\"success\": False, \"error\": \"not lent to that member\"}\n")
REQUESTS_ON_A_MISS = library('''
    def get_book(self, book_id: str) -> dict:
        """Get a book's record by its id. Ids look like B001."""
        if not (book_id.startswith("B") and book_id[1:].isdigit()):
            return {"success": False, "error": "malformed book id"}
        if book_id not in self.books:
            self.purchase_requests.append(book_id)
            return {"success": False, "error": "not in the catalogue; a purchase was requested"}
        return {"success": True, "data": self.books[book_id]}''', "purchase_requests")
PLAIN_STATE = {"books": {"b1": {"title": "Dune"}, "b2": {"title": "Emma"}}, "loans": {"b2": "Bo"}}
SHAPED_STATE = {"books": {"B001": {"title": "Dune"}, "B002": {"title": "Emma"}}, "loans": {"B002": "Bo"},
                "purchase_requests": []}


def validate(code: str, state: dict, runtime):
    candidate = EnvCandidate(topic_fp="t", class_name="Library", class_code=code,
                             tools=extract_tools(code, "Library"), tool_kinds=KINDS)
    return asyncio.run(validate_candidate(candidate, runtime, None, SETTINGS, test_state=state))


def test_a_query_that_changes_state_only_when_given_its_optional_argument_is_rejected(runtime) -> None:
    out = validate(LENDS_ON_A_LOOKUP, PLAIN_STATE, runtime)
    assert not out.report.accepted
    assert "query tool get_book changed state" in out.report.critical, out.report.critical


def test_an_optional_argument_that_only_narrows_a_query_is_accepted(runtime) -> None:
    out = validate(FILTERS_ON_A_LOOKUP, PLAIN_STATE, runtime)
    assert out.report.accepted, out.report
    assert any(r.tool == "get_book" and "member" in r.args for r in out.rounds), "the optional was never probed"


def test_a_refusal_that_changes_state_for_a_well_formed_unknown_id_is_rejected(runtime) -> None:
    out = validate(REQUESTS_ON_A_MISS, SHAPED_STATE, runtime)
    assert not out.report.accepted
    assert any("get_book" in c and "changed state" in c for c in out.report.critical), out.report.critical


def test_the_missing_id_probe_is_shaped_like_the_states_ids(runtime) -> None:
    out = validate(REQUESTS_ON_A_MISS.replace("            self.purchase_requests.append(book_id)\n", ""),
                   SHAPED_STATE, runtime)
    assert out.report.accepted, out.report
    missing = [r.args["book_id"] for r in out.rounds if r.tool == "get_book" and r.check == "missing"]
    assert missing and all(m.startswith("B") and m[1:].isdigit() and m not in SHAPED_STATE["books"]
                           for m in missing[:1]), missing


REQUESTS_ON_AN_UNKNOWN_NUMBER = '''
class Registry:
    def __init__(self, init_config):
        self.items = init_config.get("items", {})
        self.requests = init_config.get("requests", [])

    def get_item(self, item_id: int) -> dict:
        """Look up an item by its id."""
        if str(item_id) in self.items:
            return {"success": True, "data": dict(self.items[str(item_id)])}
        if 0 < item_id < 2**63:
            self.requests.append(item_id)
        return {"success": False, "error": "no such item"}
'''
LARGEST_ID = 2**63 - 1


def test_an_integer_missing_id_stays_within_64_bits_next_to_the_largest_real_one(runtime) -> None:
    """Red team 9, F3: the probe was `largest + 1000`, past 64 bits for an id of 2**63 - 1, so the
    sandbox refused it and no missing-id probe reached the tool: the write below was accepted."""
    state = {"items": {str(LARGEST_ID): {"item_id": LARGEST_ID}, "7": {"item_id": 7}}, "requests": []}
    candidate = EnvCandidate(topic_fp="t", class_name="Registry", class_code=REQUESTS_ON_AN_UNKNOWN_NUMBER,
                             tools=extract_tools(REQUESTS_ON_AN_UNKNOWN_NUMBER, "Registry"),
                             tool_kinds={"get_item": "query"})
    out = asyncio.run(validate_candidate(candidate, runtime, None, SETTINGS, test_state=state))
    assert not out.report.accepted
    assert any("get_item" in c and "changed state" in c for c in out.report.critical), out.report.critical


@pytest.mark.parametrize(("held", "expected"), [([5, 7], 8), ([1042, 17], 1043), ([LARGEST_ID, 7], LARGEST_ID - 1),
                                                ([99, 98], 97), ([], 1000)])
def test_an_integer_missing_id_has_a_real_ids_digits(held: list[int], expected: int) -> None:
    assert missing_int(held) == expected


def test_a_numbered_series_with_every_last_digit_taken_gets_its_next_number(runtime) -> None:
    """Red team 9, F3: with B0..B9 held, the last digit had no free value and the probe became `Z0`,
    which the class refuses as malformed: its write for a well-formed unknown id was never met."""
    state = {"books": {f"B{i}": {"title": f"Book {i}"} for i in range(10)}, "loans": {}, "purchase_requests": []}
    out = validate(REQUESTS_ON_A_MISS, state, runtime)
    assert not out.report.accepted
    assert any("get_book" in c and "changed state" in c for c in out.report.critical), out.report.critical


AUDITS_AN_UNKNOWN_UUID = library('''
    def get_book(self, book_id: str) -> dict:
        """Get a book's record by its id (a UUID)."""
        import uuid
        try:
            uuid.UUID(book_id)
        except ValueError:
            return {"success": False, "error": "malformed book id"}
        if book_id not in self.books:
            self.purchase_requests.append(book_id)
            return {"success": False, "error": "no such book"}
        return {"success": True, "data": self.books[book_id]}''', "purchase_requests")


def test_a_missing_uuid_is_still_a_uuid(runtime) -> None:
    """Red team 9, F3: ids ending in a hex letter (`...7a1b`) were probed with `...7a1z`, no UUID."""
    ids = ["3f2b8c1e-9d4a-4e7b-8a61-5c0d2e9f7a1b", "a7c4e2d9-1b3f-4a8e-9c72-6d5e0f1a2b3c"]
    state = {"books": {i: {"title": "Dune"} for i in ids}, "loans": {}, "purchase_requests": []}
    out = validate(AUDITS_AN_UNKNOWN_UUID, state, runtime)
    assert not out.report.accepted
    assert any("get_book" in c and "changed state" in c for c in out.report.critical), out.report.critical


@pytest.mark.parametrize(("held", "expected"), [
    (["B001", "B002"], "B009"), ([f"B{i}" for i in range(10)], "B10"), (["b1", "b2"], "b9"),
    (["3f2b8c1e-9d4a-4e7b-8a61-5c0d2e9f7a1b"], "3f2b8c1e-9d4a-4e7b-8a61-5c0d2e9f7a9b"), (["--"], None)])
def test_a_missing_text_id_keeps_the_states_format(held: list[str], expected: str | None) -> None:
    assert shaped_missing_id(held) == expected


REQUESTS_ON_AN_UNKNOWN_CODE = AUDITS_AN_UNKNOWN_UUID.replace(  # one capital letter and one digit, or malformed
    "        import uuid\n        try:\n            uuid.UUID(book_id)\n        except ValueError:\n",
    "        import re\n        if not re.fullmatch(r\"[A-Z][0-9]\", book_id):\n")
assert "re.fullmatch" in REQUESTS_ON_AN_UNKNOWN_CODE


def test_codes_whose_last_position_is_used_up_get_a_missing_code_of_the_same_format(runtime) -> None:
    """rt11-B F6: with A0..C9 held the probe was `A10` (the series' next number), which a class taking one
    letter and one digit refuses as malformed; its write for a well-formed unknown `D0` was never met."""
    state = {"books": {r + d: {"title": "Dune"} for r in "ABC" for d in "0123456789"}, "loans": {},
             "purchase_requests": []}
    out = validate(REQUESTS_ON_AN_UNKNOWN_CODE, state, runtime)
    assert not out.report.accepted
    assert any("get_book" in c and "changed state" in c for c in out.report.critical), out.report.critical


@pytest.mark.parametrize(("held", "expected"), [
    ([r + d for r in "ABC" for d in "0123456789"], "D0"),
    ([r + d for r in "XYZ" for d in "0123456789"], "A0"),
    ([r + d for r in "abc" for d in "0123456789"], "d0"),
    (list("abcdef"), "g"),
])
def test_a_used_up_last_position_changes_an_earlier_one_within_its_class(held: list[str], expected: str) -> None:
    assert shaped_missing_id(held) == expected


def test_no_missing_id_of_another_class_when_every_id_of_the_format_is_held() -> None:
    """Every one-letter id held (a..z, A..Z): no unknown id has their format, and `9` (a digit, from the hex
    alphabet) was none either; the fixed `__missing_id__` then stands for "no such id"."""
    import string

    assert shaped_missing_id(list(string.ascii_lowercase + string.ascii_uppercase)) is None
