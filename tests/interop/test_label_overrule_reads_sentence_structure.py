"""Spec: the label overrule (docs/interop.md, Import and audit) reads the rt19-R4 families by the sentence's
structure, not by a list of the report's words; every row here is one the report did not list.

F1, lookups that write keeping their `state_change` label: (a) a negated statement of change, in any tense,
person or subject ("No updates were saved.", "the loan is never renewed", "without flagging it"), and a
passive of any lookup verb ("is fetched", "are counted"), declare a lookup; (b) a change verb's participle used
as an adjective before a noun ("the renewed loans") is no change; (c) a name made of a change-verb word then a
data noun (`renew_date`, `publish_time`, `refund_reason`) is a noun phrase, so the docstring decides.

F4, honest changes overruled: (a) "show/display X as <state>" places one thing as a state, in any person;
(b) third-person "Returns <a thing> to <a place>" is the physical return; (c) a change after a semicolon, a
colon or an inserted condition keeps the label; (d) "Render X <state>", "Get X ready" make X be a state.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.interop.test_label_overrule_needs_clear_evidence import (
    LENDS, MARKS, accepted_and_verified, judged_query, keeps_file_label, rejected_as_a_writing_query)

NEGATED_CHANGES = [
    ("get_book_no_updates", "Get the book. No updates were saved to the catalog.", LENDS),
    ("get_book_never_renewed", "Get the book; its loan is never renewed.", MARKS),
    ("get_book_nothing_made", "Get the book: no new loan will be created.", LENDS),
    ("get_book_without_flagging", "Get the book, without flagging it as read.", LENDS),
    ("get_book_they_not_deleted", "Get the books; they are not deleted.", MARKS),
]
LOOKUP_PASSIVES = [
    ("book_fetched", "The book is fetched by its id.", LENDS),
    ("book_loans_counted", "The loans of the book are counted and reported.", MARKS),
]
ADJECTIVE_PARTICIPLES = [
    ("get_renewed_loans", "Get the renewed loans of the book.", LENDS),
    ("list_approved_records", "List the approved records of a member.", MARKS),
]
NOUN_PHRASE_NAMES = [
    ("renew_date", "Return the renew date of the book.", LENDS),
    ("publish_time", "Return the publish time of the book.", MARKS),
    ("refund_reason", "Return the refund reason of the book.", LENDS),
    ("transfer_log", "Return the transfer log of the book.", LENDS),
]
LOOKUPS = NEGATED_CHANGES + LOOKUP_PASSIVES + ADJECTIVE_PARTICIPLES + NOUN_PHRASE_NAMES


@pytest.mark.parametrize(("name", "doc", "body"), LOOKUPS, ids=[n for n, _, _ in LOOKUPS])
def test_a_negated_change_a_lookup_passive_an_adjective_participle_or_a_noun_phrase_name_is_judged_a_query(
        tmp_path: Path, name: str, doc: str, body: str) -> None:
    judged_query(tmp_path, name, doc, body)


HONEST_CHANGES = [
    ("display_book_reserved", "Displays the book as reserved."),
    ("show_book_hidden", "Show the book as hidden."),
    ("returns_book_to_shelf", "Returns the book to the shelf."),
    ("returns_copy_to_branch", "Returns a borrowed copy to the branch and closes the loan."),
    ("fetch_book_semicolon", "Fetch the book; renew its loan."),
    ("find_book_colon", "Find the book: reserve it for the member."),
    ("get_book_if_free", "Get the book and, if it is free, lend it to the member."),
    ("view_book_when_late", "View the book; when it is late, fine the member and flag it."),
    ("render_book_void", "Render the loan void."),
    ("get_book_ready", "Get the book ready for pickup."),
]


@pytest.mark.parametrize(("name", "doc"), HONEST_CHANGES, ids=[n for n, _ in HONEST_CHANGES])
def test_a_state_placement_a_physical_return_a_later_clause_or_a_causative_keeps_the_file_label(
        tmp_path: Path, name: str, doc: str) -> None:
    keeps_file_label(tmp_path, name, doc)


STILL_LOOKUPS = [
    ("returns_book_record", "Returns the record of the book to the caller.", LENDS),
    ("get_book_if_unloaned", "Get the book if it is not loaned.", LENDS),
    ("get_books_available", "Get the books available for pickup.", LENDS),
    ("show_books_sorted", "Show the books; sort them by title.", LENDS),
]


@pytest.mark.parametrize(("name", "doc", "body"), STILL_LOOKUPS, ids=[n for n, _, _ in STILL_LOOKUPS])
def test_lookups_beside_those_rules_stay_queries(tmp_path: Path, name: str, doc: str, body: str) -> None:
    judged_query(tmp_path, name, doc, body)


def test_an_honest_change_after_a_semicolon_is_accepted_and_its_scenario_verified(
        tmp_path: Path, sandbox_pool: Any) -> None:
    accepted_and_verified(tmp_path, sandbox_pool, "fetch_book_semicolon", "Fetch the book; lend it to Ana.")


def test_a_lending_lookup_that_says_no_changes_were_made_rejects_its_env(tmp_path: Path, sandbox_pool: Any) -> None:
    rejected_as_a_writing_query(tmp_path, sandbox_pool, "get_book_no_changes", "Get the book. No edits were made.")
