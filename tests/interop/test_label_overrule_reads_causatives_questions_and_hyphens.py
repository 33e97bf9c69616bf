"""Spec: the label overrule (docs/interop.md, Import and audit) reads whom a causative is done for, a question asking
for a value and a hyphenated modifier by the sentence's structure (rt22-R15).

F1: a causative `get` with a participle then "for <a thing>" ("Get the appointment booked for the surgery.") says which
record, so a writing lookup so documented is judged a query; only "for <someone>" (a person, a role, a party) makes it
a change, and "Nothing is changed." in the docstring outweighs the causative reading.

F3: a docstring asking for a value ("What is the ...?", "Which ...?", "How many ...?") declares a lookup.

F2: a hyphenated word is one word: "the weekly sign-in count" is a count, so one thing counted into it is added; "toward" ends the counted thing's noun phrase as "for" does.
The rows are not the report's: the structure is tested, not a list of nouns.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.interop.test_label_overrule_needs_clear_evidence import (
    LENDS, MARKS, judged_query, keeps_file_label, rejected_as_a_writing_query)

PICKED_FOR_A_THING = [
    ("get_appointment", "Get the appointment booked for the surgery.", LENDS),
    ("getSlotReserved", "Get the slot reserved for the loading bay.", MARKS),
    ("get_room_booked", "Get the room booked for the guest. Nothing is changed.", LENDS),
    ("get_permit", "Get the permit filed for the contractor. No record is modified.", MARKS),
]


@pytest.mark.parametrize(("name", "doc", "body"), PICKED_FOR_A_THING, ids=[n for n, _, _ in PICKED_FOR_A_THING])
def test_a_causative_for_a_thing_or_one_saying_nothing_changes_is_judged_a_query(
        tmp_path: Path, name: str, doc: str, body: str) -> None:
    judged_query(tmp_path, name, doc, body)


QUESTIONS = [
    ("what_is_fare", "What is the current fare of the route?", LENDS),
    ("whichRooms", "Which rooms of the hotel are free tonight?", MARKS),
    ("how_many_seats", "How many seats are left on the flight?", LENDS),
]


@pytest.mark.parametrize(("name", "doc", "body"), QUESTIONS, ids=[n for n, _, _ in QUESTIONS])
def test_a_docstring_asking_for_a_value_declares_a_lookup(tmp_path: Path, name: str, doc: str, body: str) -> None:
    judged_query(tmp_path, name, doc, body)


HONEST_CHANGES = [
    # F1 controls: a causative done for someone still changes
    ("get_table", "Get the table booked for the family."),
    ("getClaimFiled", "Get the claim filed for the cardholder."),
    # F2: one thing counted into a tally a hyphenated word modifies
    ("count_pass", "Count the pass of the rider in the weekly sign-in count."),
    ("tallyRun", "Tally the batter's run toward the year-to-date total."),
]


@pytest.mark.parametrize(("name", "doc"), HONEST_CHANGES, ids=[n for n, _ in HONEST_CHANGES])
def test_a_causative_for_someone_and_a_count_into_a_hyphenated_tally_keep_the_file_label(
        tmp_path: Path, name: str, doc: str) -> None:
    keeps_file_label(tmp_path, name, doc)


def test_a_lending_lookup_asking_a_question_rejects_its_env(tmp_path: Path, sandbox_pool: Any) -> None:
    rejected_as_a_writing_query(tmp_path, sandbox_pool, "what_is_fare", "What is the current fare of the route?")
