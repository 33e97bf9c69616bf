"""Spec: `envscaler validate` reads a causative done for a thing, a question asking for a value and a hyphenated
modifier as the import does (docs/validation.md, "Query or state change"; rt22-R15). The rows are not the report's."""

from __future__ import annotations

import pytest

from envscaler_core.validation import classify_tools
from envscaler_core.validation.tool_kinds import declared_kinds
from tests.validation.test_tool_kinds_agree_with_the_import import writing_class

LOOKUPS = [
    ("get_appointment", "Get the appointment booked for the surgery."),
    ("get_room_booked", "Get the room booked for the guest. Nothing is changed."),
    ("what_is_fare", "What is the current fare of the route?"),
    ("whichRooms", "Which rooms of the hotel are free tonight?"),
    ("how_many_seats", "How many seats are left on the flight?"),
]


@pytest.mark.parametrize(("name", "doc"), LOOKUPS, ids=[n for n, _ in LOOKUPS])
def test_the_docstring_declares_the_lookup_whatever_the_return_convention(name: str, doc: str) -> None:
    """With a "message" return (the convention of a change), the docstring still declares the lookup."""
    label = classify_tools(writing_class(name, doc, "message"), "E", [name])[name]
    assert label.kind == "query" and "docstring" in label.source, label.evidence


@pytest.mark.parametrize(("name", "doc"), LOOKUPS, ids=[n for n, _ in LOOKUPS])
def test_validate_and_the_import_give_the_lookup_the_same_kind(name: str, doc: str) -> None:
    code = writing_class(name, doc, "data")
    assert declared_kinds(code, "E", [name])[name][0] == classify_tools(code, "E", [name])[name].kind == "query"


CHANGES = [
    ("get_table", "Get the table booked for the family."),
    ("count_pass", "Count the pass of the rider in the weekly sign-in count."),
    ("tallyRun", "Tally the batter's run toward the year-to-date total."),
]


@pytest.mark.parametrize(("name", "doc"), CHANGES, ids=[n for n, _ in CHANGES])
def test_a_causative_for_someone_and_a_count_into_a_hyphenated_tally_are_declared_changes(name: str, doc: str) -> None:
    """Even with a "data" return (the convention of a lookup), the docstring declares the change."""
    label = classify_tools(writing_class(name, doc, "data"), "E", [name])[name]
    assert label.kind == "state_change" and "docstring" in label.source, label.evidence


def test_a_hyphenated_word_the_name_spells_as_two_is_still_the_names_noun_phrase() -> None:
    """`check_in_time` "Return the check-in time of the hotel.": the sentence decides, as before hyphens were joined."""
    label = classify_tools(writing_class("check_in_time", "Return the check-in time of the hotel.", "message"),
                           "E", ["check_in_time"])["check_in_time"]
    assert label.kind == "query" and "docstring" in label.source, label.evidence
