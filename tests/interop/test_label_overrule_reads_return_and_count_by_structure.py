"""Spec: the label overrule (docs/interop.md, Import and audit) reads "Return ..." and "Count ..." by the sentence's
structure, in every person (rt21-R9).

F1: "Return <something>" sent nowhere (no "to <a place>", "into", "back") hands data back whatever follows the verb, a
question ("whether ..."), a quantifier ("all ...") or a plain noun phrase ("the pending invoices"), exactly as
"Returns ..." does; so a writing lookup so documented is judged a query. A name that is the docstring's own object
(`open_tickets` for "Return all open tickets.") is a noun phrase, not the verb "open" and its object.

F2: "Count" or "tally" of one thing credited to someone or placed in a tally ("Count the goal for the home team.",
"Count the point of the player in the match results.") is a change, as "Tally the vote for the candidate." is;
counting plural things or one thing where it lies ("Count the cash in the register.") stays a lookup.

F3: a name that is the docstring's verb and the head of its object (`return_bond` for "Return the security bond of the
renter.") is the act of returning it, so the honest refund keeps its label; with a name that says nothing, "... to the
renter" says where it goes. The rows are not the report's: the structure is tested, not a list of nouns.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.interop.test_label_overrule_needs_clear_evidence import (
    LENDS, MARKS, accepted_and_verified, judged_query, keeps_file_label, rejected_as_a_writing_query)

ARGS_STYLE = """Return the delivery estimate for the parcel.

        Args:
            book_id (str): The unique identifier of the book.

        Returns:
            dict: {"success": True, "data": str}
        """

RETURNED_WITH_NO_DESTINATION = [
    ("venue_open", "Return whether the venue is open on Sunday.", LENDS),
    ("pending_invoices", "Return all pending invoices.", MARKS),
    ("upcoming_shipments", "Return the upcoming shipments.", LENDS),
    ("delivery_estimate", "Return the delivery estimate for the parcel.", LENDS),
    ("delivery_estimate_args", ARGS_STYLE, MARKS),
    ("overdue_loans", "Return every overdue loan of the member.", LENDS),
    ("shipments_third_person", "Returns the upcoming shipments.", LENDS),
    # the name is the sentence's own object: "open" is an adjective there, not the verb
    ("open_tickets", "Return all open tickets.", LENDS),
    ("openAccounts", "Return the open accounts of the customer.", MARKS),
]


@pytest.mark.parametrize(("name", "doc", "body"), RETURNED_WITH_NO_DESTINATION,
                         ids=[n for n, _, _ in RETURNED_WITH_NO_DESTINATION])
def test_return_with_no_destination_is_judged_a_query_in_every_person(
        tmp_path: Path, name: str, doc: str, body: str) -> None:
    judged_query(tmp_path, name, doc, body)


COUNTED_LOOKUPS = [
    ("count_open_tickets", "Count the open tickets of the agent.", LENDS),
    ("cash_on_hand", "Count the cash in the till.", MARKS),
    ("counts_members", "Counts the members for the club.", LENDS),
]


@pytest.mark.parametrize(("name", "doc", "body"), COUNTED_LOOKUPS, ids=[n for n, _, _ in COUNTED_LOOKUPS])
def test_counting_plural_things_or_one_thing_where_it_lies_is_judged_a_query(
        tmp_path: Path, name: str, doc: str, body: str) -> None:
    judged_query(tmp_path, name, doc, body)


HONEST_CHANGES = [
    # F2: one thing counted for someone or into a tally
    ("count_goal", "Count the goal for the home team."),
    ("count_point", "Count the point of the player in the match results."),
    ("counts_run", "Counts the run for the batting side."),
    ("tally_ballot", "Tally the ballot of the member in the poll results."),
    # F3: the name is the sentence's verb and the head of its object; or the sentence names where it goes
    ("return_bond", "Return the security bond of the renter."),
    ("returnBond", "Returns the damage bond of the renter."),
    ("bond_refund", "Return the security bond of the renter to the renter."),
    # a physical return with a destination, in both persons
    ("canoe_checkin", "Return the canoe to the boathouse."),
    ("canoe_checkin_third_person", "Returns the canoe to the boathouse."),
]


@pytest.mark.parametrize(("name", "doc"), HONEST_CHANGES, ids=[n for n, _ in HONEST_CHANGES])
def test_one_thing_counted_for_someone_or_returned_by_its_name_keeps_the_file_label(
        tmp_path: Path, name: str, doc: str) -> None:
    keeps_file_label(tmp_path, name, doc)


def test_a_lending_lookup_documented_return_all_rejects_its_env(tmp_path: Path, sandbox_pool: Any) -> None:
    rejected_as_a_writing_query(tmp_path, sandbox_pool, "pending_invoices", "Return all pending invoices.")


def test_an_honest_count_for_someone_is_accepted_and_its_scenario_verified(tmp_path: Path, sandbox_pool: Any) -> None:
    accepted_and_verified(tmp_path, sandbox_pool, "count_goal", "Count the goal for the home team.")


def test_an_honest_refund_named_return_bond_is_accepted_and_its_scenario_verified(
        tmp_path: Path, sandbox_pool: Any) -> None:
    accepted_and_verified(tmp_path, sandbox_pool, "return_bond", "Return the security bond of the renter.")
