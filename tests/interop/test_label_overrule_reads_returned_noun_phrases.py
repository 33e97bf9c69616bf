"""Spec: the label overrule (docs/interop.md, Import and audit) reads "Return X of Y" by its structure (rt20-R7 F1).

"Return the <noun phrase> of <thing>." and "Return <thing>'s <noun phrase>." with no destination hand data back
whatever the noun phrase is, so a writing lookup so documented is judged a query, in the one-line style and in
EnvScaler's Args/Returns style alike. "Return <a thing> to <a place>" (or "into", "back") stays the physical
return, a change, so an honest one keeps its file label. The rows are not the report's: the rule is tested, not a
list of nouns.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.interop.test_label_overrule_needs_clear_evidence import (
    LENDS, MARKS, accepted_and_verified, judged_query, keeps_file_label, rejected_as_a_writing_query)

ARGS_STYLE = """Return the pickup location of the parcel.

        Args:
            book_id (str): The unique identifier of the book.

        Returns:
            dict: {"success": True, "data": str}
        """

RETURNED_NOUN_PHRASES = [
    ("pickup_location", "Return the pickup location of the parcel.", LENDS),
    ("home_airport", "Return the home airport of the passenger.", MARKS),
    ("loyalty_tier", "Return the loyalty tier of the member.", LENDS),
    ("postal_address", "Return the member's postal address.", LENDS),
    ("course_instructor", "Return the instructor of the course.", MARKS),
    ("warranty_terms", "Returns the warranty terms of the product.", LENDS),
    ("pickup_location_args", ARGS_STYLE, LENDS),
    ("address_to_caller", "Return the address of the customer to the caller.", LENDS),
    ("refund_reference", "Return the refund reference of the payment.", MARKS),
]


@pytest.mark.parametrize(("name", "doc", "body"), RETURNED_NOUN_PHRASES, ids=[n for n, _, _ in RETURNED_NOUN_PHRASES])
def test_return_a_noun_phrase_of_a_thing_with_no_destination_is_judged_a_query(
        tmp_path: Path, name: str, doc: str, body: str) -> None:
    judged_query(tmp_path, name, doc, body)


PHYSICAL_RETURNS = [
    ("return_kayak", "Return the kayak of the guest to the rental shed."),
    ("return_scooter", "Returns the scooter of the rider to the dock."),
    ("return_copy", "Return the member's copy to the shelf."),
    ("return_pallet", "Return the pallet of the order into the warehouse."),
]


@pytest.mark.parametrize(("name", "doc"), PHYSICAL_RETURNS, ids=[n for n, _ in PHYSICAL_RETURNS])
def test_return_a_thing_to_a_place_keeps_the_file_label(tmp_path: Path, name: str, doc: str) -> None:
    keeps_file_label(tmp_path, name, doc)


def test_a_lending_lookup_returning_a_noun_phrase_of_a_thing_rejects_its_env(tmp_path: Path, sandbox_pool: Any) -> None:
    rejected_as_a_writing_query(tmp_path, sandbox_pool, "loyalty_tier", "Return the loyalty tier of the member.")


def test_an_honest_return_to_a_place_is_accepted_and_its_scenario_verified(tmp_path: Path, sandbox_pool: Any) -> None:
    accepted_and_verified(tmp_path, sandbox_pool, "return_kayak", "Return the kayak of the guest to the rental shed.")
