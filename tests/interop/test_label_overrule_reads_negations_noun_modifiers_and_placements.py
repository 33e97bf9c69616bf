"""Spec: the label overrule (docs/interop.md, Import and audit) read the rt18-R2 families right both ways.

F1, lookups that write keeping their `state_change` label (a lookup-only trajectory paid 1.0): a negated
passive says nothing changes ("nothing is changed", "no record is altered"); a passive of a lookup verb
("are listed", "are returned") and a participle that arranges or marks things in the result ("ordering them
by price", "marking overdue ones in the result") state no change; "the records" is a noun.

F2, the same through names and docstrings built from a noun and a data noun: "Return the vote count of a
candidate.", "Return the seat map of the venue." look up (the data noun may follow a noun modifier), and
"Count the records." counts.

F3, honest changes overruled and their envs rejected: a lookup verb with one thing and a destination or a
placement ("Sort the ticket into the done column.", "Export the order to the fulfillment system.", "Rank the
player first on the leaderboard.") and a change stated in a later sentence of the summary ("View the post. The
view counter is incremented.") keep the file's label.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.interop.test_label_overrule_needs_clear_evidence import (
    LENDS, MARKS, accepted_and_verified, judged_query, keeps_file_label, rejected_as_a_writing_query)

DECLARED_LOOKUPS = [
    # F1: nothing changes, a lookup verb's passive, a participle arranging or marking the result
    ("get_item_nothing_changed", "Get the item; nothing is changed.", LENDS),
    ("get_item_nothing_modified", "Get the item; nothing is modified.", MARKS),
    ("get_item_nothing_written", "Get the item (nothing is written).", LENDS),
    ("get_item_no_record_altered", "Get the item; no record is altered.", LENDS),
    ("get_records_listed", "Get the records; the records are listed newest first.", LENDS),
    ("get_items_ordering", "Get the items, ordering them by price.", LENDS),
    ("get_members_marking", "Get the members, marking overdue ones in the result.", LENDS),
    ("book_details", "The book's details are returned.", LENDS),
    ("book_summary", "The book's summary is returned.", MARKS),
    # F2: a noun modifier before the data noun; count with its object
    ("vote_count", "Return the vote count of a candidate.", LENDS),
    ("seat_map", "Return the seat map of the venue.", LENDS),
    ("vote_tally", "Return the vote tally of a candidate.", LENDS),
    ("seat_layout", "Return the seat layout of the venue.", MARKS),
    ("ship_date", "Return the ship date of an order.", LENDS),
    ("rent_amount", "Return the rent amount of a unit.", LENDS),
    ("record_count", "Count the records.", LENDS),
    ("log_entries", "Count the logs of a book.", MARKS),
]


@pytest.mark.parametrize(("name", "doc", "body"), DECLARED_LOOKUPS, ids=[n for n, _, _ in DECLARED_LOOKUPS])
def test_a_negated_passive_a_lookup_passive_or_a_noun_modified_data_noun_is_judged_a_query(
        tmp_path: Path, name: str, doc: str, body: str) -> None:
    judged_query(tmp_path, name, doc, body)


HONEST_CHANGES = [
    ("sort_ticket_done", "Sort the ticket into the done column."),
    ("sort_tickets_done", "Sort the tickets into the done column."),
    ("sort_mail", "Sort the letter into the outbound bin."),
    ("group_item_into_bundle", "Group the items into a bundle."),
    ("group_ticket", "Group the ticket with its duplicates."),
    ("export_report", "Export the report to the archive folder."),
    ("export_order", "Export the order to the fulfillment system."),
    ("rank_player_first", "Rank the player first on the leaderboard."),
    ("rank_item", "Rank the item as a top seller."),
    ("tally_vote", "Tally the vote for the candidate."),
    ("observe_holiday", "Observe the holiday on the calendar."),
    ("display_product", "Display the product in the front window."),
    ("show_item_in_window", "Show the item in the storefront."),
    ("list_the_house", "List the house with the agency."),
    ("view_post", "View the post. The view counter is incremented."),
    ("get_coupon", "Retrieve the coupon, which is then marked as redeemed."),
]


@pytest.mark.parametrize(("name", "doc"), HONEST_CHANGES, ids=[n for n, _ in HONEST_CHANGES])
def test_a_lookup_verb_placing_one_thing_or_a_change_in_a_later_sentence_keeps_the_file_label(
        tmp_path: Path, name: str, doc: str) -> None:
    keeps_file_label(tmp_path, name, doc)


STILL_LOOKUPS = [
    ("list_orders_sorting", "List the orders, sorting them by date.", LENDS),
    ("get_item_second_sentence", "Get the item. Nothing is modified.", LENDS),
    ("sort_books_by_year", "Sort the books by publication year.", LENDS),
    ("show_item_reviews", "Show the item with its reviews.", LENDS),
    ("export_orders", "Export the orders to the report.", LENDS),
    ("tally_votes", "Tally the votes for the candidate.", LENDS),
    ("count_books", "Count the books.", LENDS),
]


@pytest.mark.parametrize(("name", "doc", "body"), STILL_LOOKUPS, ids=[n for n, _, _ in STILL_LOOKUPS])
def test_lookups_beside_those_rules_stay_queries(tmp_path: Path, name: str, doc: str, body: str) -> None:
    judged_query(tmp_path, name, doc, body)


def test_an_honest_sort_into_a_column_is_accepted_and_its_scenario_verified(
        tmp_path: Path, sandbox_pool: Any) -> None:
    accepted_and_verified(tmp_path, sandbox_pool, "sort_ticket_done", "Sort the ticket into the done column.")


def test_a_lending_vote_count_rejects_its_env(tmp_path: Path, sandbox_pool: Any) -> None:
    rejected_as_a_writing_query(tmp_path, sandbox_pool, "vote_count", "Return the vote count of a candidate.")
