"""Spec: `envscaler validate` reads "Return ..." and "Count ..." by the sentence's structure, as the import does
(docs/validation.md, "Query or state change"; rt21-R9). "Return <something>" sent nowhere is a lookup in every person,
declared by the docstring, not left to the return convention; a name that is the sentence's own object (`open_tickets`)
is a noun phrase. "Count" of one thing credited to someone is a change; the name that is the sentence's verb and object
head (`return_bond`) keeps the act of returning. The rows are not the report's."""

from __future__ import annotations

import pytest

from envscaler_core.validation import classify_tools
from envscaler_core.validation.tool_kinds import declared_kinds
from tests.validation.test_tool_kinds_agree_with_the_import import writing_class

RETURNED_LOOKUPS = [
    ("venue_open", "Return whether the venue is open on Sunday."),
    ("canoe_back", "Returns whether the canoe can go back to the boathouse."),
    ("pending_invoices", "Return all pending invoices."),
    ("upcoming_shipments", "Return the upcoming shipments."),
    ("delivery_estimate", "Return the delivery estimate for the parcel."),
    ("open_tickets", "Return all open tickets."),
    ("openAccounts", "Return the open accounts of the customer."),
]


@pytest.mark.parametrize(("name", "doc"), RETURNED_LOOKUPS, ids=[n for n, _ in RETURNED_LOOKUPS])
def test_return_with_no_destination_is_declared_a_lookup_by_the_docstring(name: str, doc: str) -> None:
    """Even with a "message" return (the convention of a change), the docstring declares the lookup."""
    label = classify_tools(writing_class(name, doc, "message"), "E", [name])[name]
    assert (label.kind, label.source) == ("query", "docstring"), label.evidence


@pytest.mark.parametrize(("name", "doc"), RETURNED_LOOKUPS, ids=[n for n, _ in RETURNED_LOOKUPS])
def test_validate_and_the_import_give_a_returned_lookup_the_same_kind(name: str, doc: str) -> None:
    code = writing_class(name, doc, "data")
    assert declared_kinds(code, "E", [name])[name][0] == classify_tools(code, "E", [name])[name].kind == "query"


HONEST_CHANGES = [
    ("count_goal", "Count the goal for the home team."),
    ("point_credit", "Count the point of the player in the match results."),
    ("return_bond", "Return the security bond of the renter."),
    ("returnBond", "Returns the damage bond of the renter."),
    ("canoe_checkin", "Return the canoe to the boathouse."),
]


@pytest.mark.parametrize(("name", "doc"), HONEST_CHANGES, ids=[n for n, _ in HONEST_CHANGES])
def test_one_thing_counted_for_someone_or_returned_by_its_name_is_a_change_in_both_paths(name: str, doc: str) -> None:
    code = writing_class(name, doc, "data")
    label = classify_tools(code, "E", [name])[name]
    assert label.kind == "state_change", label.evidence
    assert declared_kinds(code, "E", [name]).get(name, ("state_change",))[0] == "state_change"


def test_counting_plural_things_is_still_declared_a_lookup() -> None:
    label = classify_tools(writing_class("ticket_total", "Count the open tickets of the agent.", "message"), "E",
                           ["ticket_total"])["ticket_total"]
    assert (label.kind, label.source) == ("query", "docstring"), label.evidence
