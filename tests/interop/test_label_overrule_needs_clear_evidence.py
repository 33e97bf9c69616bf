"""Spec: a file's `state_change` label is overruled only where the name or docstring clearly declares a query,
the other not saying otherwise (docs/interop.md, Import and audit). Both directions cost something: an
honest change overruled to a query gets its env rejected and its scenarios lost; a lookup left a change
lets a lending lookup pay 1.0.

rt14-C F1: honest changes were overruled by a query word in the name (`get_a_table` "Seat the party at a
table.", `read_and_reply` "Reply to the message.", `list_item` "List an item for sale ..."); each env was
rejected though EnvScaler pays its reference solution. rt14-B F2: lookups named and documented by a lookup
verb the lexicon lacked (`locate_book` "Locate a book.", `print_book_card`, `explain_book`) kept their label.
rt15-R (the re-check of those fixes): "Determine the winner ... and record it", "Check availability and book
the room" were overruled (a change verb that may be a noun, followed by its object, was not read), and
`show_post_and_replies` / `view_item_and_reviews` kept their label (a plural read as a verb).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from envscaler_core.interop.read import read_envs
from envscaler_core.models.interop import ImportedEnv, ImportedScenario
from envscaler_core.store import Store
from tests.fixtures.lending import library
from tests.interop.conftest import run_import, settings_for, write_scenarios_dir
from tests.interop.test_a_breach_on_any_tested_state import ENV, _scenario, _tool

# an honest change: refuses a missing book and a repeat, then lends
HONEST = '''
        if book_id not in self.books:
            return {"success": False, "error": "no such book"}
        if book_id in self.loans:
            return {"success": False, "error": "already done"}
        self.loans[book_id] = "Ana"
        return {"success": True, "message": "done"}'''
# a lookup that lends the book on every call
LENDS = '''
        if book_id not in self.books:
            return {"success": False, "error": "no such book"}
        self.loans[book_id] = "Ana"
        return {"success": True, "data": self.books[book_id]}'''
# a lookup that marks the record it shows
MARKS = '''
        if book_id not in self.books:
            return {"success": False, "error": "no such book"}
        self.books[book_id]["status"] = "seen"
        return {"success": True, "data": self.books[book_id]}'''
PLAIN = {"books": {"b1": {"title": "Dune", "status": "ok"}}, "loans": {}}


def _env(name: str, doc: str, body: str) -> dict[str, Any]:
    """A library whose tool `name`, documented `doc` with `body`, is labelled state_change in the file."""
    code = library(f'''
    def {name}(self, book_id: str) -> dict:
        """{doc}"""{body}''')
    return {**ENV, "env_id": "env_labels", "env_class_code": code,
            "tools": [_tool(name, ["book_id"]), _tool("lend_book", ["book_id", "member"])],
            "operation_list": [{"operation_name": name, "operation_type": "state_change"},
                               {"operation_name": "lend_book", "operation_type": "state_change"}]}


def _directory(tmp_path: Path, env: dict[str, Any], solution: list[dict[str, Any]]) -> Path:
    records = [{**_scenario("t1", PLAIN), "env_id": env["env_id"]}]
    return write_scenarios_dir(tmp_path / "in", env["env_id"], env, records, {"t1": solution})


def _kind(tmp_path: Path, name: str, doc: str, body: str) -> tuple[str, list[str]]:
    env = _env(name, doc, body)
    [read], problems, _ = read_envs(_directory(tmp_path, env, []) / "env_metadata.json")
    assert not problems
    return read.tool_kinds[name], read.notes


HONEST_CHANGES = [
    # a query word in the name, a change stated by the docstring (rt14-C F1)
    ("view_and_acknowledge_alert", "Acknowledge an alert after viewing it."),
    ("get_a_table", "Seat the party at a table."),
    ("check_item", "Tick the checkbox of a checklist item."),
    ("show_and_dismiss", "Dismiss the notification."),
    ("read_and_reply", "Reply to the message."),
    ("list_item", "List an item for sale on the marketplace."),
    # the same family in other words: a compound name whose later verb is no query verb ...
    ("view_and_upvote", "Upvote the post after viewing it."),
    ("find_and_enlist", "Enlist a volunteer found by name."),
    ("get_and_stamp", "Stamp the passport."),
    # ... a docstring led by a verb we cannot place, or by a common change verb ...
    ("get_ride", "Hail a taxi for the rider."),
    ("count_vote", "Cast a vote for a candidate."),
    ("read_message", "Acknowledges the message."),
    ("show_badge", "Award a badge to the member."),
    ("view_alert", "Snooze the alert for an hour."),
    ("lookup_order", "Respond to the customer's order query."),
    ("check_coat", "Hang up the guest's coat."),
    ("get_boat", "Hoist the sail of the boat."),  # verbs no lexicon holds: the file's label stands
    ("check_guest", "Usher the guest to the lounge."),
    ("view_and_transcribe", "Transcribe the voicemail after viewing it."),
    # ... a listing for sale or rent
    ("list_property", "List a property for rent."),
    ("list_car", "List the car on the market."),
    ("list_item_for_sale", "Put an item up for sale."),
    # a lookup verb leading a sentence that then states the change (rt15-R F1: rejected after rt14's lexicon)
    ("determine_winner", "Determine the winner of the match and record it in the standings."),
    ("obtain_consent", "Obtain the patient's consent and record it."),
    ("explain_charge", "Explain a charge to the customer and log that it was explained."),
    ("tell_story", "Tell a story to the child and record it in the log."),
    ("print_label", "Print the shipping label (sets the order status to labelled)."),
    ("obtain_permit", "Obtain a parking permit for the vehicle."),
    ("book_room", "Check availability and book the room."),
    ("place_order", "Determine the price and place the order."),
    ("record_result", "Analyze the sample and record the result."),
    ("order_item", "Check the stock and order the item."),
    # a request, a sentence going on to a verb we cannot place, a change "by setting" (rt16-R F3)
    ("get_approval", "Request approval for the expense."),
    ("find_match", "Find a match for the player and pair them."),
    ("show_item", "Show the item in the storefront by setting its visible flag."),
    ("search_and_select_hotel", "Search for hotels and select one for the trip."),
    # earlier controls (rt14-C): still kept
    ("get_ticket", "Obtain (purchase) a ticket for the user, marking it as sold."),
    ("check_in_guest", "Check in a guest for their reservation and mark the room as occupied."),
    ("get_and_mark_read", "Get a message and mark it read."),
]


@pytest.mark.parametrize(("name", "doc"), HONEST_CHANGES, ids=[n for n, _ in HONEST_CHANGES])
def test_a_change_the_docstring_states_keeps_its_file_label_whatever_query_word_its_name_has(
        tmp_path: Path, name: str, doc: str) -> None:
    keeps_file_label(tmp_path, name, doc)


def keeps_file_label(tmp_path: Path, name: str, doc: str) -> None:
    """An honest change `name` documented `doc` keeps its `state_change` label, with no overrule note."""
    kind, notes = _kind(tmp_path, name, doc, HONEST)
    assert kind == "state_change", notes
    assert not any("declare" in n for n in notes), notes


def judged_query(tmp_path: Path, name: str, doc: str, body: str) -> None:
    """`name` documented `doc`, labelled state_change, is judged a query, with a note naming it."""
    kind, notes = _kind(tmp_path, name, doc, body)
    assert kind == "query", notes
    assert any(name in n and "declare" in n for n in notes), notes


DECLARED_LOOKUPS = [
    # lookup verbs the lexicon lacked (rt14-B F2)
    ("locate_book", "Locate a book.", LENDS),
    ("print_book_card", "Print a book's card.", LENDS),
    ("explain_book", "Explain a book's status.", LENDS),
    # the same family in other words
    ("display_book", "Display a book.", MARKS),
    ("tell_book_status", "Tell a book's status.", LENDS),
    ("identify_book", "Identify a book by its title.", MARKS),
    ("analyze_loans", "Analyze the loans of a member.", LENDS),
    ("determine_due_date", "Determine a loan's due date.", MARKS),
    ("recommend_book", "Recommend a book to a member.", LENDS),
    ("list_books_for_sale", "List all books currently for sale.", MARKS),
    ("list_books", "List the books for sale in the shop.", LENDS),
    # a compound name whose later word is no verb, or a query verb: the docstring decides
    ("get_book_and_author", "Get a book and its author.", LENDS),
    ("view_and_compare", "View two books and compare them.", MARKS),
    # a plural after `and` in a name is the object; a name going on after "for sale" lists details (rt15-R F2)
    ("show_post_and_replies", "Show a post and its replies.", LENDS),
    ("list_item_for_sale_details", "List the sale details of an item.", LENDS),
    ("view_item_and_reviews", "View an item and its reviews.", LENDS),
    # "... and return it" is the lookup's answer; "Return the details of ..." looks up; `get_<x>_and_<noun>`
    # pairs two nouns (rt16-R F2: these lent and were accepted after rt15's fix)
    ("find_book_by_id", "Find a book by id and return it.", LENDS),
    ("search_books", "Search books by title and return the matches.", LENDS),
    ("book_details", "Return the details of a book.", LENDS),
    ("book_info", "Return information about a book.", MARKS),
    ("get_book_and_review", "Get a book and its review.", LENDS),
    ("get_event_and_schedule", "Get an event and its schedule.", LENDS),
    ("get_order_and_ship_date", "Get an order and its ship date.", LENDS),
    # earlier control (rt14-B)
    ("find_book", "Find a book.", LENDS),
]


@pytest.mark.parametrize(("name", "doc", "body"), DECLARED_LOOKUPS, ids=[n for n, _, _ in DECLARED_LOOKUPS])
def test_a_lookup_its_name_and_docstring_declare_is_judged_a_query_whatever_its_file_label(
        tmp_path: Path, name: str, doc: str, body: str) -> None:
    judged_query(tmp_path, name, doc, body)


def _imported(tmp_path: Path, sandbox_pool: Any, env: dict[str, Any],
              solution: list[dict[str, Any]]) -> tuple[ImportedEnv, list[ImportedScenario]]:
    settings = settings_for(tmp_path)
    run_import(_directory(tmp_path, env, solution), settings, sandbox_pool, run_id="imp")
    with Store.from_url(settings.store.url) as store:
        [imported] = store.query(ImportedEnv, run_id="imp")
        return imported, store.query(ImportedScenario, run_id="imp")


def test_an_honest_change_named_like_a_lookup_is_accepted_and_its_scenario_verified(
        tmp_path: Path, sandbox_pool: Any) -> None:
    accepted_and_verified(tmp_path, sandbox_pool, "get_a_table", "Seat the party at a table.")


def test_a_lending_lookup_documented_by_a_lookup_verb_rejects_its_env(tmp_path: Path, sandbox_pool: Any) -> None:
    rejected_as_a_writing_query(tmp_path, sandbox_pool, "locate_book", "Locate a book.")


def accepted_and_verified(tmp_path: Path, sandbox_pool: Any, name: str, doc: str) -> None:
    """The honest change `name` documented `doc` is imported: its env accepted, its own call's scenario verified."""
    env = _env(name, doc, HONEST)
    imported, [scenario] = _imported(tmp_path, sandbox_pool, env, [{"name": name, "arguments": {"book_id": "b1"}}])
    assert imported.status == "accepted", imported.reasons
    assert scenario.audit == "verified", scenario.reasons


def rejected_as_a_writing_query(tmp_path: Path, sandbox_pool: Any, name: str, doc: str) -> None:
    """The lending lookup `name` documented `doc` is judged a query, so its env is rejected for the breach."""
    env = _env(name, doc, LENDS)
    imported, _ = _imported(tmp_path, sandbox_pool, env,
                            [{"name": "lend_book", "arguments": {"book_id": "b1", "member": "Ana"}}])
    assert imported.status == "rejected"
    assert any(f"query tool {name} changed state" in r for r in imported.reasons), imported.reasons

