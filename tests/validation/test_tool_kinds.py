"""Spec: without a spec, tools are labelled from their declared purpose (name, docstring, return
convention) with the code deciding only when those are silent or contradict each other; the label says
where it came from; the LLM confirms or breaks ties. The mock library's classes (written by others)
come out exactly as their domains label them, and so does their defective query."""

from __future__ import annotations

import pytest

from envscaler_core.models.validation import ToolKindLabel
from envscaler_core.synth import extract_tools
from envscaler_core.validation import classify_tools
from envscaler_core.validation.class_effects import ClassEffects
from envscaler_core.validation.tool_kinds import doc_kind, merge_llm, name_kind, unplaced_verb
from mock_llm import library


@pytest.mark.parametrize(("name", "kind"), [
    ("get_book", "query"), ("list_overdue_loans", "query"), ("is_available", "query"), ("searchCatalog", "query"),
    ("check_in_guest", "state_change"), ("return_book", "state_change"), ("get_or_create_member", "state_change"),
    ("log_dose", "state_change"), ("book_appointment", "state_change"), ("freeze", "state_change"),
    ("books_by_author", None), ("balance", None),
    # a word that may be a verb, then a data noun: a noun phrase, so a lookup that writes is still a query's
    # defect when its docstring says it looks up
    ("vote_count", None), ("seat_map", None), ("order_status", None), ("book_details", None),
    ("order_pizza", "state_change"), ("vote_for_candidate", "state_change"),
])
def test_the_leading_verb_of_a_name_declares_its_kind(name: str, kind: str | None) -> None:
    assert name_kind(name) == kind


@pytest.mark.parametrize(("doc", "kind"), [
    ("Retrieve one reservation.", "query"), ("Lists the rooms of a building.", "query"),
    ("Get one member's membership and credits.", "query"),  # 'credits' is a noun here
    ("Fetch the next ticket and remove it from the queue.", "state_change"),
    # "Return X of Y" with no destination hands data back (rt20-R7 F1); on `return_item`, whose first word leads
    # the sentence too, the name keeps the act of returning (tests/validation/test_tool_kinds_agree_with_the_import)
    ("Return the item of an active loan.", "query"),
    ("Current balance of an account.", None),
])
def test_the_docstring_summary_declares_its_kind(doc: str, kind: str | None) -> None:
    assert doc_kind(doc) == kind


@pytest.mark.parametrize(("name", "kind"), [
    ("read_and_transcribe", None), ("read_and_reply", "state_change"), ("view_and_acknowledge_alert", "state_change"), ("get_book_and_author", None),
    ("view_and_compare", "query"), ("list_item_for_sale", "state_change"), ("list_items_for_sale", "query"),
    ("locate_book", "query"), ("seat_guest", "state_change"),
])
def test_a_compound_name_declares_a_query_only_when_its_later_verb_is_one_too(name: str, kind: str | None) -> None:
    """rt14-C F1: `read_and_reply` read as a query by its first verb; the later verb is the act."""
    assert name_kind(name) == kind


@pytest.mark.parametrize(("doc", "kind"), [
    ("List an item for sale on the marketplace.", "state_change"), ("List a flat for rent.", "state_change"),
    ("List the items for sale.", "query"), ("List all books currently for sale.", "query"),
    ("Print a book's card.", "query"), ("Explains a loan's status.", "query"), ("Identifies the member.", "query"),
])
def test_listing_for_sale_is_a_change_and_lookups_in_other_words_are_queries(doc: str, kind: str) -> None:
    assert doc_kind(doc) == kind


@pytest.mark.parametrize(("doc", "verb"), [
    ("Hoist the sail.", "hoist"), ("Respond to the customer.", None),  # respond: a known change
    ("Usher the guest to the lounge.", "usher"), ("Given the id, return the book.", None), ("Balance for an account.", None),
    ("Details of the order.", None), ("Helper that returns a user.", None), ("Status: the current status.", None),
])
def test_a_docstring_led_by_a_verb_and_its_object_names_the_verb_when_it_is_unknown(doc: str, verb: str | None) -> None:
    """An unknown verb followed by its object says something other than a lookup (the file's label stands);
    a noun phrase or a lead-in ("Given ...") says nothing."""
    assert unplaced_verb(doc) == verb


CODE = '''
class Shop:
    def __init__(self):
        self.orders = {}
        self._cache = {}

    def get_order(self, order_id: str) -> dict:
        """Retrieve an order."""
        order = self.orders.get(order_id)
        self._cache[order_id] = order  # private: not state
        return {"success": True, "data": dict(order or {})}

    def peek_total(self, order_id: str) -> dict:
        """Look at an order's total."""
        order = self.orders[order_id]
        order["views"] = order.get("views", 0) + 1
        return {"success": True, "data": order["total"]}

    def workflow(self, order_id: str) -> dict:
        """Order workflow step."""
        self._advance(self.orders[order_id])
        return {"success": True}

    def summary(self) -> dict:
        """Status overview."""
        return {"success": True, "data": len(self.orders)}

    def _advance(self, order):
        order["status"] = "processed"
'''


def test_labels_come_with_their_sources_and_the_code_decides_only_when_the_purpose_is_silent() -> None:
    labels = classify_tools(CODE, "Shop", ["get_order", "peek_total", "workflow", "summary"])
    assert (labels["get_order"].kind, labels["get_order"].source) == ("query", "name+docstring+code")
    assert labels["get_order"].writes == []  # a private cache and a copy are not state writes
    # declared a query, but writes: the label stays query so the fact "a query changed state" applies
    assert (labels["peek_total"].kind, labels["peek_total"].source) == ("query", "name+docstring")
    assert labels["peek_total"].writes == ["orders"] and "the code disagrees" in labels["peek_total"].evidence
    # nothing declared: a write through a private helper makes it a state change
    assert (labels["workflow"].kind, labels["workflow"].source) == ("state_change", "code")
    assert "passes state to _advance()" in labels["workflow"].evidence
    # name and docstring silent: the return convention ("data") declares a query
    assert (labels["summary"].kind, labels["summary"].source) == ("query", "returns+code")


def test_the_llm_confirms_or_breaks_ties() -> None:
    labels = classify_tools(CODE, "Shop", ["get_order", "workflow"])
    agreed = merge_llm(labels["get_order"], "query", "reads an order")
    assert agreed.kind == "query" and agreed.source.endswith("+llm") and "reads an order" in agreed.evidence
    purpose = merge_llm(labels["workflow"], "query", "only reports")  # code-only label: the LLM's purpose wins
    assert (purpose.kind, purpose.source) == ("query", "llm")
    clear = ToolKindLabel(kind="query", source="name", writes=["orders"])
    settled = merge_llm(clear, "state_change")  # a clear name, an LLM that disagrees: the code settles it
    assert settled.kind == "state_change" and "settled by the code" in settled.evidence


@pytest.mark.parametrize("domain", library.domains(), ids=lambda d: d.name)
def test_the_mock_librarys_classes_are_labelled_as_their_domains_say(domain) -> None:  # type: ignore[no-untyped-def]
    names = [t.function.name for t in extract_tools(domain.class_source, domain.class_name)]
    labels = classify_tools(domain.class_source, domain.class_name, names)
    assert {n: label.kind for n, label in labels.items()} == domain.tool_kinds


def test_writes_are_found_through_aliases_helpers_and_passed_records() -> None:
    code = '''
def _bump(record):
    record["n"] += 1


class Env:
    def __init__(self):
        self.rows = []
        self.meta = {}

    def via_alias(self, i: int) -> dict:
        """x"""
        row = self.rows[i]
        row["seen"] = True
        return {"success": True}

    def via_loop(self) -> dict:
        """x"""
        for key, value in self.meta.items():
            value.clear()
        return {"success": True}

    def via_module_function(self, k: str) -> dict:
        """x"""
        _bump(self.meta[k])
        return {"success": True}

    def via_copy(self) -> dict:
        """x"""
        rows = list(self.rows)
        rows.append({"fake": True})
        snapshot = dict(self.meta)
        snapshot["x"] = 1
        return {"success": True}
'''
    effects = ClassEffects(code, "Env")
    assert [w.attr for w in effects.writes("via_alias")] == ["rows"]
    assert [w.attr for w in effects.writes("via_loop")] == ["meta"]
    assert [w.attr for w in effects.writes("via_module_function")] == ["meta"]
    assert effects.writes("via_copy") == []


@pytest.mark.parametrize("name", ["vote_tally", "seat_layout", "seat_chart", "ship_date", "rent_amount",
                                  "vote_results", "record_count", "item_count"])
def test_a_nounish_word_then_a_data_noun_declares_nothing_so_a_writing_lookup_is_judged_by_its_docstring(
        name: str) -> None:
    """rt18-R2 F2: `vote_tally` "Return the item's value." was a conflict, and the code's write made it a change."""
    doc = "Count the records." if name.endswith("count") else "Return the item's value."
    code = (f"class E:\n    def __init__(self):\n        self.items = {{}}\n\n    def {name}(self, item_id: str) -> dict:\n"
            f'        """{doc}"""\n        self.items[item_id] = True\n        return {{"success": True, "data": 1}}\n')
    label = classify_tools(code, "E", [name])[name]
    assert (name_kind(name), label.kind, label.source) == (None, "query", "docstring")
