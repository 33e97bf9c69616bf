"""Spec: the label overrule (docs/interop.md, Import and audit) reads which words belong to the returned thing and which
clause picks a record, by the sentence's structure (rt22-R14).

F1: a "to ..." that the noun phrase takes itself (a relational noun: route, distance, directions; a participle or an
adjective after the noun: owed, due, assigned, addressed, nearest; "next"; an infinitive "to be signed") sends
nothing anywhere, so "Return <it>" is sent nowhere and a writing lookup so documented is judged a query. A "to" right
after the returned thing ("Return the drill of the member to the tool library.") is still the physical return.

F2: a passive inside the clause that picks the record ("the hour the shipment was dispatched", "the number of times
the room was booked"), a participle marking some of the answer (", marking the ones reserved for staff") and a
passive on a schedule ("Fares are adjusted every day.") are no change the call makes.

F3/F4: a causative `get` of one thing with a participle then "for <someone>" ("Get the table booked for the party.")
and "check" of one thing onto or through to somewhere ("Check the suitcase onto the ferry.") are changes; "Get the
table booked by the guest." still picks a record.

F5: tallying money owed for someone ("Tally the bar tab for the diner.") and "Report <data> of <owner>" are lookups.
The rows are not the report's: the structure is tested, not a list of nouns.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.interop.test_label_overrule_needs_clear_evidence import (
    LENDS, MARKS, accepted_and_verified, judged_query, keeps_file_label, rejected_as_a_writing_query)

NOUN_BOUND_TO = [
    ("harbour_path", "Return the fastest path to the harbour.", LENDS),
    ("stationDistance", "Returns the walking distance to the station.", MARKS),
    ("museum_directions", "Return the directions to the museum.", LENDS),
    ("rent_owed", "Return the rent owed to the landlord.", MARKS),
    ("deposit_due", "Return the deposit due to the tenant.", LENDS),
    ("ward_nurse", "Return the nurse assigned to the ward.", MARKS),
    ("airport_hotel", "Return the hotel nearest to the airport.", LENDS),
    ("office_parcel", "Return the parcel addressed to the office.", MARKS),
    ("report_to_sign", "Return the report to be signed by the manager.", LENDS),
    ("berlin_train", "Return the next train to Berlin.", MARKS),
]


@pytest.mark.parametrize(("name", "doc", "body"), NOUN_BOUND_TO, ids=[n for n, _, _ in NOUN_BOUND_TO])
def test_a_to_phrase_the_noun_takes_itself_sends_nothing_so_the_return_is_judged_a_query(
        tmp_path: Path, name: str, doc: str, body: str) -> None:
    judged_query(tmp_path, name, doc, body)


PICKING_CLAUSES = [
    ("dispatch_hour", "Return the hour the shipment was dispatched.", LENDS),
    ("opened_day", "Return the day the account was opened.", MARKS),
    ("cancellation_reason", "Return the reason why the order was cancelled.", LENDS),
    ("room_booked_times", "Return the number of times the room was booked.", MARKS),
    ("staff_rooms", "Return the rooms of the hotel, marking the ones reserved for staff.", LENDS),
    ("route_fare", "Return the fare of the route. Fares are adjusted every day.", MARKS),
]


@pytest.mark.parametrize(("name", "doc", "body"), PICKING_CLAUSES, ids=[n for n, _, _ in PICKING_CLAUSES])
def test_a_passive_that_picks_the_record_or_a_participle_marking_the_answer_is_no_change(
        tmp_path: Path, name: str, doc: str, body: str) -> None:
    judged_query(tmp_path, name, doc, body)


MONEY_AND_REPORTED_DATA = [
    ("tally_diner_tab", "Tally the bar tab for the diner.", LENDS),
    ("tallySum", "Tally the sum for the member.", MARKS),
    ("report_fee", "Report the late fee of the loan.", LENDS),
]


@pytest.mark.parametrize(("name", "doc", "body"), MONEY_AND_REPORTED_DATA,
                         ids=[n for n, _, _ in MONEY_AND_REPORTED_DATA])
def test_tallying_money_owed_or_reporting_data_of_an_owner_is_judged_a_query(
        tmp_path: Path, name: str, doc: str, body: str) -> None:
    judged_query(tmp_path, name, doc, body)


HONEST_CHANGES = [
    # F1 controls: one thing sent to a place, its owner skipped
    ("drill_back", "Return the drill of the member to the tool library."),
    ("returns_ladder", "Returns the borrowed ladder to the depot."),
    # F2 controls: a participle clause acting on the answer itself, a passive the call makes
    ("clean_rooms", "Return the rooms of the hotel, marking them as cleaned."),
    ("view_ticket", "Return the ticket of the customer. The ticket is then closed."),
    # F3: a causative with one thing, a participle, then who it is done for
    ("get_table_booked", "Get the table booked for the party."),
    ("getPermitFiled", "Get the permit filed for the contractor."),
    # F4: check one thing onto or through to somewhere
    ("check_suitcase", "Check the suitcase onto the ferry."),
    ("checkLuggageThrough", "Check the luggage through to Tokyo."),
    # F5 control: one point tallied for someone is still added
    ("tally_point", "Tally the point for the player."),
]


@pytest.mark.parametrize(("name", "doc"), HONEST_CHANGES, ids=[n for n, _ in HONEST_CHANGES])
def test_a_causative_for_someone_a_checked_bag_and_a_real_return_keep_the_file_label(
        tmp_path: Path, name: str, doc: str) -> None:
    keeps_file_label(tmp_path, name, doc)


def test_a_causative_participle_by_someone_still_picks_a_record(tmp_path: Path) -> None:
    judged_query(tmp_path, "get_table_booked", "Get the table booked by the guest.", LENDS)


def test_a_lending_lookup_documented_with_a_noun_bound_to_rejects_its_env(tmp_path: Path, sandbox_pool: Any) -> None:
    rejected_as_a_writing_query(tmp_path, sandbox_pool, "rent_owed", "Return the rent owed to the landlord.")


def test_an_honest_checked_suitcase_is_accepted_and_its_scenario_verified(tmp_path: Path, sandbox_pool: Any) -> None:
    accepted_and_verified(tmp_path, sandbox_pool, "check_suitcase", "Check the suitcase onto the ferry.")
