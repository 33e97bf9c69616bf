"""Spec: the label overrule (docs/interop.md, Import and audit) reads the families an outside checker's wide
table found wrong both ways (rt17-C, 249 generator-style rows), not only the examples it gave.

F2, honest changes overruled to a query and their envs rejected (24 of 109 rows): listing one thing is a
change in any person and wherever it goes ("Lists a car for sale.", "List a property on the rental
platform.", "List a vehicle for auction."); a participle clause or a passive anywhere in the summary states a
change (", setting it visible", "a new empty cart is created"); "Get <one thing> <past participle>" is
causative ("Get the document signed by the client.").

F3, lookups that write keeping their `state_change` label, so a lookup-only trajectory paid 1.0 (26 of 139
rows): a possessive before the returned data ("Return the book's details."), a word that may be a noun
ending the sentence after `and` ("Get the member and loan."), and everyday lookup verbs the lexicon lacked
(sort, evaluate, poll, monitor, rank, tally, test, export, ...); a verb that can be either (scan a ticket,
assess a fee, generate an invoice, price an item) stays unplaced, so the file's label stands.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.interop.test_label_overrule_needs_clear_evidence import (
    LENDS, MARKS, accepted_and_verified, judged_query, keeps_file_label, rejected_as_a_writing_query)

HONEST_CHANGES = [
    # listing one thing: third person, a platform, a purpose (the checker's rows, then other words)
    ("list_car", "Lists a car for sale."),
    ("list_property", "List a property on the rental platform."),
    ("list_apartment", "List the apartment on the rental site."),
    ("list_room", "List a room for booking on the platform."),
    ("list_vehicle_for_auction", "List a vehicle for auction."),
    ("list_product", "List a new product in the store catalog."),
    ("list_boat", "Lists the boat on the marketplace website."),
    ("list_painting", "List one painting for adoption."),
    ("list_bike", "List a bike."),
    ("list_item_as_sold", "List the item as sold."),
    # a participle clause or a passive stating the change anywhere in the summary
    ("display_item", "Display the item in the shop window, setting it visible."),
    ("show_offer", "Shows the offer on the front page, marking it featured."),
    ("get_user_cart", "Retrieves the user's cart; if none exists, a new empty cart is created."),
    ("fetch_profile", "Fetch the member's profile; its visit counter gets updated."),
    ("view_ticket", "View the ticket; it is then marked as seen."),
    # a verb that can be either stays unplaced, so the file's label stands
    ("scan_ticket", "Scan the ticket at the gate."),
    ("assess_fee", "Assess a late fee on the loan."),
    ("generate_invoice", "Generate an invoice for the order."),
    # causative get: one thing and a past participle after it
    ("get_document_signed", "Get the document signed by the client."),
    ("get_order_delivered", "Get the order delivered to the customer."),
    ("get_item_approved", "Get the item approved by the manager."),
    ("get_car_washed", "Get the car washed before pickup."),
    ("get_invoice_paid", "Gets the invoice paid."),
    ("get_passport_stamped", "Get the passport stamped at the border."),
]


@pytest.mark.parametrize(("name", "doc"), HONEST_CHANGES, ids=[n for n, _ in HONEST_CHANGES])
def test_a_listing_a_participle_a_passive_or_a_causative_get_keeps_the_file_label(
        tmp_path: Path, name: str, doc: str) -> None:
    keeps_file_label(tmp_path, name, doc)


DECLARED_LOOKUPS = [
    # a possessive before the returned data (the checker's rows, then other words)
    ("book_details", "Return the book's details.", LENDS),
    ("book_information", "Return the book's information.", LENDS),
    ("book_record", "Return the book's record.", MARKS),
    ("book_status", "Return the book's current status.", LENDS),
    ("return_book_info", "Return the book's info.", LENDS),
    ("member_history", "Returns a member's loan history.", LENDS),
    # a word that may be a noun ending the sentence after `and`
    ("get_member_and_loan", "Get the member and loan.", LENDS),
    ("get_account_and_transfer", "Get the account and transfer.", MARKS),
    ("fetch_order_refund", "Fetch the order and refund.", LENDS),
    ("get_event_and_register_info", "Get the event and register info.", LENDS),
    # everyday lookup verbs
    ("sort_books_by_year", "Sort the books by publication year.", LENDS),
    ("evaluate_eligibility", "Evaluate whether the member is eligible to borrow the book.", LENDS),
    ("poll_book_status", "Poll the status of the book.", MARKS),
    ("monitor_book", "Monitor the book's status.", LENDS),
    ("rank_books", "Rank the books by rating.", LENDS),
    ("tally_loans", "Tally the loans of a book.", LENDS),
    ("test_code_valid", "Test whether the code is valid.", LENDS),
    ("export_book_list", "Export the book list as text.", LENDS),
    ("group_books_by_genre", "Group the books by genre.", LENDS),
    ("observe_queue", "Observes the queue of a book.", LENDS),
    ("inspect_shelf", "Survey the shelf of a book.", LENDS),
    # the listing, passive and causative rules leave lookups alone
    ("list_books", "List the books in the store catalog.", LENDS),
    ("list_member_loans", "List a member's loans.", LENDS),
    ("get_books_borrowed", "Get the books borrowed by a member.", LENDS),
    ("get_ticket_assigned", "Get the ticket assigned to the agent.", LENDS),
    ("check_book_reserved", "Check whether the book is reserved.", MARKS),
    ("get_removed_orders", "Get the orders that were removed.", LENDS),
    ("get_booking", "Get the booking for the guest.", LENDS),
]


@pytest.mark.parametrize(("name", "doc", "body"), DECLARED_LOOKUPS, ids=[n for n, _, _ in DECLARED_LOOKUPS])
def test_a_possessive_a_noun_pair_or_an_everyday_lookup_verb_is_judged_a_query(
        tmp_path: Path, name: str, doc: str, body: str) -> None:
    judged_query(tmp_path, name, doc, body)


def test_an_honest_listing_in_the_third_person_is_accepted_and_its_scenario_verified(
        tmp_path: Path, sandbox_pool: Any) -> None:
    accepted_and_verified(tmp_path, sandbox_pool, "list_car", "Lists a car for sale.")


def test_a_lending_lookup_with_a_possessive_object_rejects_its_env(tmp_path: Path, sandbox_pool: Any) -> None:
    rejected_as_a_writing_query(tmp_path, sandbox_pool, "book_details", "Return the book's details.")
