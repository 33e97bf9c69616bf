"""Spec: `envscaler validate` and the import label a tool by one rule (docs/validation.md, "Query or state
change"; rt20-R7 F2). A name whose first word may be a noun (`order_`, `book_`, `post_`, `ship_`) followed by a
noun is a noun phrase, not a verb and its object, and so is a name whose words the docstring itself uses past its
verb ("Get the refund policy of the store." for `refund_policy`): it declares nothing, so the docstring decides, in
both paths.
A name whose first word is a verb only (`cancel_`, `archive_`) still declares its change. The rows are not the
report's."""

from __future__ import annotations

import pytest

from envscaler_core.validation import classify_tools
from envscaler_core.validation.tool_kinds import declared_kinds


def writing_class(name: str, doc: str, returns: str = "data") -> str:
    """A class whose tool `name`, documented `doc`, writes `self.orders` on every call and returns `returns`."""
    return (f"class E:\n    def __init__(self):\n        self.orders = {{}}\n\n    def {name}(self, order_id: str) -> dict:\n"
            f'        """{doc}"""\n        self.orders[order_id] = True\n'
            f'        return {{"success": True, "{returns}": 1}}\n')


NOUN_PHRASE_NAMES = [
    ("order_currency", "Get the order currency of the order."),
    ("book_genre", "Get the book genre of the loan."),
    ("post_caption", "Get the caption of the post."),
    ("ship_weight", "Get the ship weight of the parcel."),
    ("charge_description", "Get the description of the charge."),
    ("review_text", "Return the review text of the product."),
    ("rent_address", "Return the address of the rental."),
    # a change verb's word, but the sentence uses the name's words past its verb as its object
    ("refund_policy", "Get the refund policy of the store."),
    ("deposit_method", "Return the deposit method of the account."),
]


@pytest.mark.parametrize(("name", "doc"), NOUN_PHRASE_NAMES, ids=[n for n, _ in NOUN_PHRASE_NAMES])
def test_a_noun_phrase_name_declares_nothing_so_the_lookup_docstring_decides(name: str, doc: str) -> None:
    label = classify_tools(writing_class(name, doc), "E", [name])[name]
    assert (label.kind, label.source) == ("query", "docstring"), label.evidence


@pytest.mark.parametrize(("name", "doc"), NOUN_PHRASE_NAMES, ids=[n for n, _ in NOUN_PHRASE_NAMES])
def test_validate_and_the_import_give_a_noun_phrase_name_the_same_kind(name: str, doc: str) -> None:
    code = writing_class(name, doc)
    assert declared_kinds(code, "E", [name])[name][0] == classify_tools(code, "E", [name])[name].kind


@pytest.mark.parametrize(("name", "doc"), [("book_room", "Book a room for the guest."),
                                           ("ship_parcel", "Ship the parcel to the customer."),
                                           ("cancel_booking", "Cancel the booking of the guest."),
                                           ("cancel_booking", "Cancel booking for the guest."),
                                           ("return_item", "Return the item of an active loan."),
                                           ("order_items", "Order the items for the kitchen.")])
def test_a_change_its_docstring_states_stays_a_change(name: str, doc: str) -> None:
    """A name whose first word leads the sentence too is that verb and its object (`return_item` "Return the
    item of an active loan." returns it): no overrule to a query in the import, and a change in `validate`."""
    label = classify_tools(writing_class(name, doc), "E", [name])[name]
    assert label.kind == "state_change", label.evidence
    assert declared_kinds(writing_class(name, doc), "E", [name]).get(name, ("state_change",))[0] == "state_change"
