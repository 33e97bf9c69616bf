"""Spec: `envscaler validate` reads a "to" the noun takes itself, a clause that picks a record, a causative for
someone, "check ... onto" and "Tally/Report <data> ..." as the import does (docs/validation.md, "Query or state
change"; rt22-R14), and says the docstring declared a change when it did. The rows are not the report's."""

from __future__ import annotations

import pytest

from envscaler_core.validation import classify_tools
from envscaler_core.validation.tool_kinds import declared_kinds
from tests.validation.test_tool_kinds_agree_with_the_import import writing_class

LOOKUPS = [
    ("harbour_path", "Return the fastest path to the harbour."),
    ("rent_owed", "Return the rent owed to the landlord."),
    ("ward_nurse", "Return the nurse assigned to the ward."),
    ("report_to_sign", "Return the report to be signed by the manager."),
    ("berlin_train", "Return the next train to Berlin."),
    ("dispatch_hour", "Return the hour the shipment was dispatched."),
    ("room_booked_times", "Return the number of times the room was booked."),
    ("staff_rooms", "Return the rooms of the hotel, marking the ones reserved for staff."),
    ("route_fare", "Return the fare of the route. Fares are adjusted every day."),
    ("tally_diner_tab", "Tally the bar tab for the diner."),
    ("report_fee", "Report the late fee of the loan."),
]


@pytest.mark.parametrize(("name", "doc"), LOOKUPS, ids=[n for n, _ in LOOKUPS])
def test_the_docstring_declares_the_lookup_whatever_the_return_convention(name: str, doc: str) -> None:
    """With a "message" return (the convention of a change), the docstring still declares the lookup."""
    label = classify_tools(writing_class(name, doc, "message"), "E", [name])[name]
    assert label.kind == "query" and label.source in ("docstring", "name+docstring"), label.evidence


@pytest.mark.parametrize(("name", "doc"), LOOKUPS, ids=[n for n, _ in LOOKUPS])
def test_validate_and_the_import_give_the_lookup_the_same_kind(name: str, doc: str) -> None:
    code = writing_class(name, doc, "data")
    assert declared_kinds(code, "E", [name])[name][0] == classify_tools(code, "E", [name])[name].kind == "query"


CHANGES = [
    ("drill_back", "Return the drill of the member to the tool library."),
    ("get_table_booked", "Get the table booked for the party."),
    ("check_suitcase", "Check the suitcase onto the ferry."),
    ("checkLuggageThrough", "Check the luggage through to Tokyo."),
]


@pytest.mark.parametrize(("name", "doc"), CHANGES, ids=[n for n, _ in CHANGES])
def test_a_real_return_a_causative_for_someone_and_a_checked_bag_are_declared_changes(name: str, doc: str) -> None:
    """Even with a "data" return (the convention of a lookup), the docstring declares the change."""
    label = classify_tools(writing_class(name, doc, "data"), "E", [name])[name]
    assert label.kind == "state_change" and "docstring" in label.source, label.evidence


@pytest.mark.parametrize(("name", "doc"), [("count_point", "Count the point for the player."),
                                           ("tally_goal", "Tally the goal for the away side.")])
def test_a_count_credited_to_someone_is_declared_by_the_docstring_over_the_names_bare_verb(name: str, doc: str) -> None:
    """The name holds the same verb without its object; the sentence reads it with its object, so it decides."""
    label = classify_tools(writing_class(name, doc, "message"), "E", [name])[name]
    assert (label.kind, label.source) == ("state_change", "docstring+code"), label.evidence
