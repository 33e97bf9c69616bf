"""Spec: `envscaler validate` labels tools by the sentence's structure (docs/validation.md, "Query or state
change"), one behaviour per rt19-R4 family, each with rows the report did not list, so the rule is tested and
not the list. A lookup that writes and is declared a lookup is labelled query (the fact then catches it); an
honest change is labelled state_change."""

from __future__ import annotations

import pytest

from envscaler_core.validation import classify_tools
from envscaler_core.validation.tool_kinds import name_kind


def _label(name: str, doc: str, *, returns: str = "data") -> tuple[str, str]:
    """The label `validate` gives `name`, documented `doc`, whose body writes `self.items` on every call."""
    code = (f"class E:\n    def __init__(self):\n        self.items = {{}}\n\n    def {name}(self, item_id: str) -> dict:\n"
            f'        """{doc}"""\n        self.items[item_id] = True\n'
            f'        return {{"success": True, "{returns}": 1}}\n')
    label = classify_tools(code, "E", [name])[name]
    return label.kind, label.source


@pytest.mark.parametrize("doc", ["Get the loan. No updates were saved.", "Get the loan; it is never renewed.",
                                 "Get the loan, without flagging it as late.", "Get the loans; they are not deleted.",
                                 "Get the loan. No new record will be created."])
def test_a_negated_change_in_any_tense_person_or_subject_declares_a_lookup(doc: str) -> None:
    assert _label("get_loan", doc) == ("query", "name+docstring")


@pytest.mark.parametrize("doc", ["The loan is fetched by its id.", "The loans of a member are counted and reported."])
def test_a_passive_of_any_lookup_verb_declares_a_lookup(doc: str) -> None:
    assert _label("loan_info", doc) == ("query", "docstring")


@pytest.mark.parametrize("doc", ["Get the renewed loans of the member.", "List the approved records.",
                                 "Show the published records for the member."])
def test_a_change_participle_used_as_an_adjective_before_a_noun_declares_no_change(doc: str) -> None:
    assert _label("item_rows", doc) == ("query", "docstring")


@pytest.mark.parametrize("name", ["renew_date", "publish_time", "refund_reason", "transfer_log", "approve_count",
                                  "enroll_status", "submit_list", "block_reason"])
def test_a_change_verb_word_then_a_data_noun_is_a_noun_phrase_so_the_docstring_decides(name: str) -> None:
    """rt19-R4 F2: `refund_status` "Get the item's refund status." was labelled state_change by the code."""
    noun = name.replace("_", " ")
    assert name_kind(name) is None
    assert _label(name, f"Get the item's {noun}.") == ("query", "docstring")
    assert _label(name, f"Return the {noun} of an item.") == ("query", "docstring")


@pytest.mark.parametrize("doc", ["Displays the loan as overdue.", "Show the seat as taken.",
                                 "Returns the scooter to the dock.", "Returns a leased car to the dealer.",
                                 "Fetch the loan; renew it.", "Get the seat: reserve it for the guest.",
                                 "Get the loan and, once it is due, close it.", "View the seat; when it is free, hold it.",
                                 "Render the coupon invalid.", "Get the order ready for pickup."])
def test_a_state_placement_a_physical_return_a_later_clause_or_a_causative_declares_a_change(doc: str) -> None:
    assert _label("handle_item", doc, returns="message")[0] == "state_change"
    assert _label("handle_item", doc, returns="message")[1].startswith("docstring")


@pytest.mark.parametrize("doc", ["Returns the record of the loan to the caller.", "Get the loan if it is not renewed.",
                                 "Get the seats available for booking.", "Show the loans; sort them by date.",
                                 "Returns the details of a loan."])
def test_lookups_beside_those_rules_stay_lookups(doc: str) -> None:
    assert _label("loan_info", doc) == ("query", "docstring")
