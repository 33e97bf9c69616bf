"""Sentence shapes the label rule of `tool_kinds` reads as a lookup verb leading a change, or as a lookup stated
without a lookup verb (rt18-R2): a lookup verb placing one thing somewhere ("Sort the ticket into the done
column.", "Export the order to the fulfillment system."), a passive of a lookup verb ("The book's details are
returned."), and the words saying nothing changes ("nothing is changed", "no record is altered")."""

from __future__ import annotations

import re

from envscaler_core.validation.clauses import IRREGULAR, STATES

# lookup verbs that also put a thing somewhere: with a placement after one thing they may state a change
PLACING_VERBS = frozenset({"sort", "group", "export", "rank", "tally", "observe", "display", "show", "list"})
# lookup verbs that also add one thing to a count ("Count the vote for the candidate.", "Tally the ballot ...")
COUNTING = frozenset({"count", "counts", "tally"})
# where a thing is put ("in the front window", "on the leaderboard", "on the calendar")
PLACES = frozenset({"platform", "site", "website", "store", "shop", "catalog", "catalogue", "marketplace", "market",
                    "storefront", "app", "board", "exchange", "portal", "window", "directory", "calendar",
                    "leaderboard", "column", "bin", "folder", "shelf", "page", "homepage", "feed", "wall", "showcase",
                    "lane", "tray", "pile", "archive", "category", "queue", "agenda", "schedule"})
# who a thing is put with ("List the house with the agency.")
AGENTS = frozenset({"agency", "agent", "broker", "realtor", "dealer", "registrar", "auctioneer", "partner"})
_DETS = frozenset({"the", "a", "an", "its", "their", "this", "that", "our", "your", "my", "his", "her"})
# "nothing is changed", "no record is altered", "(nothing is written)": a declaration that nothing changes
NOTHING_CHANGES = re.compile(r"\b(nothing|no \w+|none of \w+( \w+)?) (is|are|gets?|will be) (changed|modified|altered|"
                             r"written|updated|stored|saved|touched|deleted|removed)\b", re.IGNORECASE)
# a passive of a lookup verb hands data back: "The book's details are returned.", "the records are listed"
LOOKUP_PASSIVE = re.compile(r"\b(is|are)\s+(returned|listed|retrieved|shown|displayed|fetched|sorted|ordered|"
                            r"grouped|reported|provided)\b(?!\s+(to|into|on|onto|with|as)\b)", re.IGNORECASE)
# a participle clause marking or arranging things in the answer: "marking overdue ones in the result"
IN_THE_RESULT = re.compile(r"\bin the (result|results|output|response|answer|listing|list)\b|"
                           r"\b(ordering|arranging)\s+(them|these|the \w+)\s+by\b", re.IGNORECASE)


def placed(first: str, phrase: list[str], after: list[str], singular: bool) -> bool:
    """A lookup verb of `PLACING_VERBS` with its object `phrase` then a destination or a placement: into/onto
    anything ("Group the items into a bundle."); for one thing, to a place, in/on a place, with an agent or
    its fellows, as a state or a kind, or first/last. One thing counted for someone or into a tally ("Tally the vote
    for the candidate.") is read by `leading_verb`, which knows the data nouns a tally is made of."""
    first = first[:-1] if first.endswith("s") and first[:-1] in PLACING_VERBS else first  # "Shows the item as ..."
    if first not in PLACING_VERBS or not phrase:
        return False
    link, what = (after + ["", ""])[:2]
    if link in ("into", "onto"):
        return True
    if not singular:
        return False
    return (phrase[-1] in ("first", "last") and len(phrase) > 1
            or link == "to" and what in _DETS
            or link in ("in", "on", "at") and any(t in PLACES for t in after[1:5])
            or link == "with" and (first == "group" or any(t in AGENTS for t in after[1:4]))
            or link == "as" and (what in ("a", "an") or what.endswith("ed") or what in STATES | IRREGULAR))  # "as sold"
