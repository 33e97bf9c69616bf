"""Query or state change, for tools no spec labels (a hand-written class given to `envscaler validate`).

The contract fact "a query never changes state" needs to know which tools are queries. A spec says so;
without one, the label is inferred and reported with where it came from:

* the *declared* purpose: the tool's name (its leading verb: `get_`, `list_` vs `cancel_`, `add_`)
  and its docstring's summary ("Retrieve ..." vs "Mark ... as returned"); when both are silent, the
  return convention EnvScaler's generator follows (`"data"` for a query, `"message"` for a change);
  and, in `llm`/`both` modes, the LLM's reading of name, docstring and code;
* the *observed* code: whether the body (or a helper it calls) writes `self.<attr>`.

The declared purpose wins over the code: a tool called `get_book` whose body also bumps a counter is
a query that changes state, which is exactly the defect the fact exists to catch. The code decides
only when name and docstring say nothing clear (`process(order_id)`), or when they contradict each
other. Labels never silence a fact: they only choose which fact applies. The verbs read are listed in
`verb_lexicon`; the rules here read a sentence past its verb (a listing, a participle clause, a passive,
a causative `get`), as a lookup verb may lead a change ("Lists a car for sale.").
"""

from __future__ import annotations

import ast
import re
from typing import Literal

from envscaler_core import pyast
from envscaler_core.models.validation import ToolKindLabel
from envscaler_core.synth.tool_schema import find_class, parse_docstring, public_methods
from envscaler_core.validation.class_effects import ClassEffects
from envscaler_core.validation.clauses import (
    STATES, adjective_participle, change_ing, later_clauses, lookup_passive, made_a_state, participle,
    without_inserted_conditions, without_negated_changes, words)
from envscaler_core.validation.placements import IN_THE_RESULT, LOOKUP_PASSIVE, NOTHING_CHANGES, PLACES, placed
from envscaler_core.validation.verb_lexicon import COMPOUND_STATE, NOUNISH, QUERY_VERBS, STATE_VERBS

Kind = Literal["query", "state_change"]

_DETERMINERS = frozenset({"a", "an", "the", "one", "this", "that", "these", "those", "all", "each", "every", "new",
                          "some", "any", "whether", "how", "what", "which", "its", "their", "his", "her", "my",
                          "your", "our", "up", "down", "in", "out", "off", "to", "for"})
SILENT = "name and docstring declare nothing"
CONFLICT = "name and docstring disagree"


def _stem(word: str) -> str:
    """'cancels' -> 'cancel', 'retrieves' -> 'retrieve', 'identifies' -> 'identify', 'lists' stays known."""
    if word in QUERY_VERBS or word in STATE_VERBS:
        return word
    for suffix, base in (("ies", "y"), ("es", ""), ("s", "")):
        if word.endswith(suffix) and _known(word[: -len(suffix)] + base):
            return word[: -len(suffix)] + base
    return word


def _known(word: str) -> bool:
    return word in QUERY_VERBS or word in STATE_VERBS


# "List an item for sale" puts it on the market; "List the items for sale" looks them up (rt14-C F1)
_ON_THE_MARKET = (("for", "sale"), ("for", "rent"), ("for", "lease"), ("for", "hire"), ("on", "the", "market"),
                  ("on", "the", "marketplace"))
_ARTICLES = frozenset({"a", "an", "the", "one", "this", "my", "your", "our", "their", "his", "her", "its"})


def _puts_on_the_market(tokens: list[str]) -> bool:
    """`list` whose one object is offered for sale or rent: the first word after the articles is singular."""
    text = " " + " ".join(tokens) + " "
    if not any(f" {' '.join(phrase)} " in text for phrase in _ON_THE_MARKET):
        return False
    rest = [t for t in tokens[1:] if t not in _ARTICLES]
    head = rest[0] if rest else ""
    plural = head.endswith("s") and not head.endswith("ss")
    return not plural and head not in ("all", "every", "each", "available", "current", "currently", "open")


# rt17-C F2: one thing listed on a platform or for a purpose is put up there ("List a property on the rental
# platform.", "List a room for booking.", "List the item as sold."); a plural, a quantifier or data is looked up
_PLATFORMS = frozenset({"platform", "site", "website", "store", "shop", "catalog", "catalogue", "marketplace", "market",
                        "storefront", "app", "board", "listings", "exchange", "portal", "window", "directory"})
_PURPOSES = frozenset({"sale", "rent", "rental", "lease", "hire", "auction", "lending", "adoption", "trade", "charter",
                       "swap", "exchange", "bidding", "purchase", "subscription", "donation", "loan", "reservation"})
_QUANTIFIERS = frozenset({"all", "every", "each", "any", "some", "available", "current", "currently", "open", "both"})
# words that end a noun phrase: "a car *for* sale", "the apartment *on* the site", "a member*'s* loans" goes on
_PHRASE_ENDS = frozenset({"for", "on", "in", "at", "to", "with", "by", "from", "of", "as", "under", "into", "onto",
                          "via", "and", "or", "within", "across", "over", "that", "which", "who", "where", "if"})
_INDEFINITE = frozenset({"a", "an", "one"})


def _plural(word: str) -> bool:
    return len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is"))


def _object_phrase(tokens: list[str]) -> tuple[list[str], int, list[str], list[str]]:
    """A sentence's words after its verb, whether an article leads them, the object's noun phrase (up to a
    preposition or a connective) and what follows it: "List [the] [apartment] [on the rental site]"."""
    rest = tokens[1:]
    start = 1 if rest and rest[0] in _ARTICLES else 0
    phrase: list[str] = []
    for token in rest[start:]:
        if token in _PHRASE_ENDS:
            break
        phrase.append(token)
    return rest, start, phrase, rest[start + len(phrase):]


def _lists_one_thing(tokens: list[str]) -> bool:
    """A docstring's `list`/`lists` whose object is one thing put up somewhere: an indefinite article ("Lists a
    car for sale.", "List a bike."), or a singular object then a purpose, a platform or a state ("List the
    apartment on the rental site.", "List the item as sold."). "List the books in the store." and "List a
    member's loans." look up (a plural), as do "List all items for sale." and "List a summary of ..."."""
    rest, start, phrase, after = _object_phrase(tokens)
    if not phrase or phrase[0] in _QUANTIFIERS or any(map(_plural, phrase)) or phrase[-1] in _DATA_NOUNS:
        return False
    if start and rest[0] in _INDEFINITE:
        return True
    link, what = (after + ["", ""])[:2]
    return (link == "for" and (what in _PURPOSES or what.endswith("ing"))
            or link in ("on", "in", "at") and any(t in _PLATFORMS for t in after[1:5])
            or link == "as" and (what in STATES or what.endswith("ed")))


def _places_one_thing(first: str, tokens: list[str]) -> bool:
    """A placing lookup verb ("sort", "export", "show", ...) whose object is put somewhere (see `placed`)."""
    rest, start, phrase, after = _object_phrase(tokens)
    sent = after[:1] in (["to"], ["into"]) and any(t in PLACES for t in after[1:5])  # "the report to the archive folder"
    if not phrase or phrase[0] in _QUANTIFIERS or phrase[-1] in _DATA_NOUNS and not sent:
        return False
    return placed(first, phrase, after, not any(map(_plural, phrase)))


def _returns_to_a_place(tokens: list[str]) -> bool:
    """Third-person "Returns <a thing> to <a place>": one thing, not data, sent back somewhere other than to whoever
    asked ("Returns a borrowed book to the library.", "Returns the scooter of the rider to the dock."); "Returns the
    details of ... to the caller" looks up."""
    _, _, phrase, after = _object_phrase(tokens)
    if after[:1] == ["of"] and "to" in after:  # whose thing it is: "the scooter [of the rider] to the dock"
        after = after[after.index("to"):]
    to, det, where = (after + ["", "", ""])[:3]
    return bool(phrase) and phrase[-1] not in _DATA_NOUNS and not any(map(_plural, phrase)) \
        and to == "to" and det in _ARTICLES and where not in _RECIPIENTS


def _returns_part_of_a_thing(tokens: list[str]) -> bool:
    """"Return X of Y" or "Return Y's X" sent nowhere hands data back whatever X is ("Return the booking reference
    of the trip.", "Return the trip's opening hours."); a destination ("to the dock", "into", "back") is the physical
    return, while "to the caller" names who asks (rt20-R7 F1)."""
    _, _, phrase, after = _object_phrase(tokens)
    if not phrase or not (after[:1] == ["of"] or "s" in phrase[1:-1]):
        return False
    tail = tokens[1:]
    sent = any(t in ("into", "onto", "back") or t == "to" and next(
        (w for w in tail[i + 1:] if w not in _ARTICLES), "") not in _RECIPIENTS for i, t in enumerate(tail))
    return not sent


def _said_after_the_market(tokens: list[str]) -> bool:
    """A name going on after its sale phrase (`list_item_for_sale_details`): the details are what it lists."""
    text = " ".join(tokens)
    return not any(text.endswith(" ".join(phrase)) for phrase in _ON_THE_MARKET)


# what a "Return the ... of ..." docstring hands back when it is a lookup
_RETURNED_DATA = frozenset({"details", "detail", "information", "info", "record", "records", "data", "status",
                            "summary", "list", "number", "count", "total", "value", "values", "name", "names",
                            "current", "profile", "history", "availability", "balance", "price", "prices", "tally",
                            "layout", "chart", "date", "amount", "results", "result", "map"})


# in a name after a word that may be a noun, these make the pair a noun phrase: `vote_count`, `seat_map`
_DATA_NOUNS = _RETURNED_DATA | frozenset({"map", "maps", "counts", "overview", "report", "reports", "stats",
                                          "statistics", "totals", "ids", "id", "entries", "entry", "options",
                                          "calendar", "score", "scores", "ratings", "size", "length", "types", "tallies",
                                          "layouts", "charts", "dates", "amounts", "fee", "fees", "level",
                                          "levels", "quantity", "time", "times", "rate", "rates", "queue", "position",
                                          "plan", "reason", "flag", "flags", "log", "logs", "rating", "note", "notes",
                                          "label", "code", "stage", "step", "type", "mode", "limit", "deadline"})
# who a lookup hands its answer to: "Returns the item to the caller." is a lookup, "... to the store" a return
_RECIPIENTS = frozenset({"caller", "user", "client", "requester", "agent", "frontend", "application", "app", "ui", "api"})


def verb_kind(tokens: list[str], *, in_name: bool) -> Kind | None:
    """The kind the leading verb declares; `get_or_create` and `find_and_remove` count their second verb."""
    if not tokens:
        return None
    if tuple(tokens[:2]) in COMPOUND_STATE:
        return "state_change"
    first = tokens[0] if in_name else _stem(tokens[0])  # names use the base verb: `books_by_author` is a noun
    if in_name and (first in NOUNISH or first in STATE_VERBS) and len(tokens) > 1 and tokens[1] in _DATA_NOUNS:
        return None  # `vote_count`, `order_status`, `merge_status`, `cancel_reason`: a noun phrase (rt19-R4 F1/F2);
    # the docstring or the code decides
    if first == "return" and not in_name:  # "Return the item of a loan" and "Returns the items" read alike,
        rest = [t for t in tokens[1:] if t not in _DETERMINERS]  # but "Return the details of a book" looks up
        while len(rest) > 2 and rest[1] == "s":  # "Return the book's details": the possessive names whose (rt17-C F3)
            rest = rest[2:]
        # "Return the vote count of a candidate.": the data noun may follow a noun modifier (rt18-R2 F2)
        data = rest and (rest[0] in _RETURNED_DATA or len(rest) > 1 and rest[1] in _DATA_NOUNS and rest[0] != "of")
        return "query" if data or _returns_part_of_a_thing(tokens) else None  # (rt16-R F2: `book_details`)
    if first == "returns" and not in_name and _returns_to_a_place(tokens):
        return "state_change"  # "Returns a rented item to the store.": the physical return (rt19-R4 F4)
    if not in_name and first == "check" and any(t in ("into", "out", "off") for t in tokens[1:8]) \
            and not any(t in ("whether", "if", "that", "how") for t in tokens[1:8]):
        return "state_change"  # "Check the guest into the room", "Check the item off the list": check in/out/off
    if not in_name and first in NOUNISH and (len(tokens) < 2 or tokens[1] not in _OBJECT_WORDS):  # "hold it"
        return None  # "Order workflow step." starts with a noun; "Order a pizza." with a verb
    kind: Kind | None = "query" if first in QUERY_VERBS else "state_change" if first in STATE_VERBS else None
    if first == "return":
        kind = "state_change"  # return_book, return_item: in names, the act of returning
    if first == "list" and in_name and _puts_on_the_market(tokens) and not _said_after_the_market(tokens):
        return "state_change"
    if first in ("list", "lists") and not in_name and (_puts_on_the_market(tokens) or _lists_one_thing(tokens)):
        return "state_change"
    if kind == "query" and not in_name and _places_one_thing(first, tokens):
        return "state_change"  # "Sort the ticket into the done column.", "Export the order to the ..." (rt18-R2 F3)
    for i, token in enumerate(tokens[:-1]):
        if token not in ("or", "and", "then"):
            continue
        follower = tokens[i + 1]
        after = tokens[i + 2] if i + 2 < len(tokens) else ""
        if in_name and _stem(follower) != follower:
            continue  # `view_item_and_reviews`, `show_post_and_replies`: in a name a plural is the object (rt15 F2)
        # `get_book_and_review`, `get_order_and_ship_date`, `get_member_and_loan`, `member_and_loan`: after a noun
        # `and` pairs two nouns; the docstring decides (rt16-R F2, rt17-C F3)
        noun_pair = in_name and (i > 1 or kind is None)
        if not in_name and follower == "return":
            continue  # "Find a book and return it": a lookup's answer, not the act of returning (rt16-R F2)
        # in a sentence, a change verb needs its object: "Get the member and loan." and "Get the event and register
        # info." pair nouns (rt17-C F3)
        if not in_name:
            follower = _stem(follower)  # "... and closes the rental": a change in any person (rt19-R4 F4)
        has_object = after in _OBJECT_WORDS or follower not in NOUNISH and after and after not in _DATA_NOUNS
        if follower in STATE_VERBS and not noun_pair and (in_name or has_object):
            return "state_change"  # "... and record it", "Check availability and book the room." (rt15 F1)
        if in_name and kind == "query" and follower not in QUERY_VERBS:
            kind = None  # `read_and_reply`, `view_and_acknowledge_alert`: a later verb we cannot place (rt14-C F1)
    return kind


# pronouns that stand for a verb's object: "... and record it", "... and pair them"
_PRONOUNS = frozenset({"it", "them", "him", "her", "one"})
# after a word that may be a noun ("record", "book", "order", "log"), these make it a verb with its object
_OBJECT_WORDS = _DETERMINERS | _PRONOUNS


def name_kind(name: str) -> Kind | None:
    return verb_kind(words(name), in_name=True)


# verbs that, conjugated, only describe a change: "Get the next ticket (removes it from the queue)."
_TELLING_CHANGES = frozenset({"removes", "deletes", "marks", "updates", "increments", "decrements", "consumes",
                              "pops", "appends", "resets", "clears", "modifies", "creates", "adds", "stores",
                              "saves", "overwrites", "records", "cancels", "assigns", "moves", "reserves",
                              "creating", "removing", "deleting", "marking", "updating", "incrementing",
                              "decrementing", "resetting", "clearing", "storing", "saving", "recording",
                              "consuming", "appending", "cancelling", "overwriting"})


# conjugated verbs that are also plural nouns ("data sets", "the logs"): a change only with an object after
_TELLING_WITH_OBJECT = frozenset({"sets", "logs", "writes"})



# in "Get the ticket assigned to the agent" a participle says which one, not what to have done
_WHICH_ONE = frozenset({"related", "associated", "attached", "linked", "assigned", "connected", "mapped", "owned",
                        "held", "stored", "saved", "used", "scheduled", "reserved", "booked", "placed", "ordered",
                        "issued", "borrowed", "loaned", "lent", "created", "posted", "submitted", "recorded",
                        "logged", "filed", "made", "added", "requested", "purchased", "bought", "rented", "selected",
                        "registered", "uploaded", "given", "sent", "written", "returned", "updated", "modified"})
# a clause holding one of these states a condition or picks a thing ("Check whether it is reserved.")
_CONDITIONS = frozenset({"whether", "if", "that", "which", "who", "whose", "when", "unless", "not", "already",
                         "currently", "still", "until", "once"})
_PASSIVE_AUX = frozenset({"is", "are", "was", "were", "be", "been", "gets", "get", "got", "becomes"})



def _participle_clause(sentence: str) -> bool:
    """`, setting it visible`, `, marking them read`: a clause after a comma led by a change verb's -ing form
    and its object states what the call changes (rt17-C F2)."""
    if IN_THE_RESULT.search(sentence):
        return False  # "ordering them by price", "marking overdue ones in the result" arrange the answer (rt18-R2 F1)
    return any(change_ing(verb) for verb in re.findall(
        r"[,;]\s*(?:and\s+|then\s+|thereby\s+)?([a-z]+ing)\s+(?:it|them|the|a|an|its|their|this|these|each|all)\b",
        sentence.lower()))


def _passive_change(sentence: str) -> bool:
    """`a new empty cart is created`, `its counter gets updated`: a passive change verb in a clause that states no
    condition ("Check whether the book is reserved." and "the orders that were removed" pick, they do not change)."""
    for clause in re.split(r"[,;:()]|\. ", sentence.lower()):
        raw = words(clause)
        tokens = [t for t in raw if t not in ("then", "also", "automatically", "immediately", "always")]
        if NOTHING_CHANGES.search(clause) or any(t in _CONDITIONS for t in tokens) \
                and not (raw[:1] == ["which"] and "then" in raw):  # ", which is then marked as redeemed" (rt18-R2 F3)
            continue
        if any(aux in _PASSIVE_AUX and participle(pp, STATE_VERBS) and pp not in ("returned", "given")
               for aux, pp in zip(tokens, tokens[1:])):  # "The book's record is returned." hands data back
            return True
    return False


def _causative(tokens: list[str]) -> bool:
    """"Get the document signed by the client.", "Have the car washed.": `get`/`have`, one thing, then a past
    participle ending the phrase. A plural or a participle that says which one looks up ("Get the books borrowed
    by a member.", "Get the ticket assigned to the agent.")."""
    if not tokens or tokens[0] not in ("get", "gets", "have", "has") or len(tokens) < 4 or tokens[1] not in _ARTICLES:
        return False
    for i in range(3, min(len(tokens), 7)):
        pp, before, after = tokens[i], tokens[i - 1], (tokens[i + 1] if i + 1 < len(tokens) else "")
        if participle(pp, STATE_VERBS | QUERY_VERBS) and pp not in _WHICH_ONE:
            return (before not in _ARTICLES | {"s"} and not any(map(_plural, tokens[2:i]))
                    and after in _PHRASE_ENDS | {"", "before", "after", "today", "now"})
    return False


def goes_on_to_an_unplaced_verb(doc: str | None) -> bool:
    """The first sentence goes on, after "and"/"then", to a verb we cannot place with its object ("Find a match
    for the player and pair them."): it says something other than a lookup (rt16-R F3)."""
    summary, _ = parse_docstring(doc)
    tokens = words((summary or "").split(". ")[0])
    return any(link in ("and", "then") and not _known(_stem(verb)) and verb not in _DETERMINERS
               and verb not in _LEAD_INS and after in _OBJECT_START | _PRONOUNS
               for link, verb, after in zip(tokens, tokens[1:], tokens[2:]))


def doc_kind(doc: str | None) -> Kind | None:
    """The kind the docstring's first sentence declares ("Retrieve ..." / "Mark ... as returned"); a
    query-sounding sentence that also says it removes or marks something declares a change."""
    summary, _ = parse_docstring(doc)
    if not summary:
        return None
    # a negated change is no change, and says the call is a lookup ("No changes are made.") (rt19-R4 F1)
    summary, negated = without_negated_changes(summary)
    sentence = without_inserted_conditions(summary.split(". ")[0])  # "... and, if it is open, close it"
    tokens = words(sentence)
    kind = verb_kind(tokens, in_name=False)
    if kind != "state_change" and (any(verb_kind(clause, in_name=False) == "state_change"
                                       for clause in later_clauses(sentence)) or made_a_state(tokens, _ARTICLES, _PHRASE_ENDS)):
        return "state_change"  # "Get the item; archive it.", "Render the item unavailable." (rt19-R4 F4)
    # "Count the records.": after an article a conjugated change verb is a plural noun (rt18-R2 F1/F2)
    if kind != "state_change" and not IN_THE_RESULT.search(sentence) and any(
            t in _TELLING_CHANGES and before not in _ARTICLES | _QUANTIFIERS
            and not adjective_participle(tokens, i + 1, _ARTICLES | _QUANTIFIERS)  # "the merged records" (rt19-R4 F1)
            for i, (before, t) in enumerate(zip(tokens, tokens[1:]))):
        return "state_change"
    if kind != "state_change" and any(by == "by" and change_ing(t) and after in _OBJECT_START | _PRONOUNS
                                      for by, t, after in zip(tokens[1:], tokens[2:], tokens[3:])):
        return "state_change"  # "Show the item in the storefront by setting its visible flag." (rt16-R F3)
    # a participle or passive anywhere in the summary's paragraph, not only its first sentence (rt18-R2 F3)
    first_clause = words(re.split(r"[;:,(]", sentence)[0])  # "Get the item; it is archived" is no causative
    if kind != "state_change" and (_participle_clause(summary) or _passive_change(summary) or _causative(first_clause)):
        return "state_change"  # ", setting it visible", "a new cart is created", "Get the document signed" (rt17-C F2)
    if kind != "state_change" and any(t in _TELLING_WITH_OBJECT and after in _OBJECT_WORDS
                                      for t, after in zip(tokens[1:], tokens[2:])):
        return "state_change"  # "Print the shipping label (sets the order status to labelled)." (rt15 F1)
    if kind is None and (LOOKUP_PASSIVE.search(sentence) or lookup_passive(sentence) or negated):
        return "query"  # "The book's details are returned.", "is looked up", "No changes are made." (rt18-R2, rt19-R4 F1)
    return kind


# what follows an imperative verb ("Seat *the* party", "Reply *to* the message"), not a noun ("Balance for ...")
_OBJECT_START = frozenset({"a", "an", "the", "these", "those", "each", "every", "all", "its", "their", "his", "her",
                           "my", "your", "our", "some", "any", "to", "up", "down", "off", "out"})
# a sentence led by a preposition or a connective: "Given the id, return ...", "For each book ..."
_LEAD_INS = frozenset({"given", "for", "using", "with", "by", "from", "if", "when", "on", "in", "at", "as", "of",
                       "after", "before", "upon", "via", "per", "across", "into", "once", "while", "where", "since",
                       "only", "also", "then", "first", "here", "just", "simply", "please", "note", "internal"})


def unplaced_verb(doc: str | None) -> str | None:
    """The docstring's first word when it is a verb we cannot place: neither a known query nor change verb,
    nor a determiner or lead-in, and followed by its object ("Hail a taxi.", "Respond to the query."). Such a
    sentence says something other than a lookup, so it does not confirm a query the name declares."""
    summary, _ = parse_docstring(doc)
    match = re.match(r"\s*([A-Za-z]+) +([A-Za-z]+)\b", (summary or "").split(". ")[0])
    if not match:
        return None
    first, second = match.group(1).lower(), match.group(2).lower()
    if _known(_stem(first)) or first in _DETERMINERS or first in _LEAD_INS or second not in _OBJECT_START:
        return None
    return first


def returns_kind(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> Kind | None:
    """EnvScaler's return convention, when the method follows it: a successful query returns
    `{"success": True, "data": ...}` (or another payload), a successful state change
    `{"success": True, "message": ...}`; a mix declares nothing."""
    keys: set[str] = set()
    for node in ast.walk(fn):
        if isinstance(node, ast.Return) and isinstance(node.value, ast.Dict):
            pairs = {k.value: v for k, v in zip(node.value.keys, node.value.values)
                     if isinstance(k, ast.Constant) and isinstance(k.value, str)}
            success = pairs.get("success")
            if isinstance(success, ast.Constant) and success.value is True:
                keys |= set(pairs) - {"success"}
    if "message" in keys:
        return "state_change" if keys == {"message"} else None
    return "query" if keys else None


def declared_kinds(code: str, class_name: str, names: list[str]) -> dict[str, tuple[Kind, str]]:
    """Each of `names` whose name or docstring declares a kind, the other not contradicting it, or whose
    docstring declares one where the name's first word may be a noun (`book_details`) or says nothing changes
    ("(read-only)", "without changing anything"): (the kind, what declared it). A label given from outside (an
    imported file's `operation_list`) that calls a declared query a state change would excuse the very defect
    "a query never changes state" catches (rt11-B F7). A docstring led by a verb we cannot place ("Seat the
    party at a table.") is the other saying otherwise: no kind, so the file's label stands, as overruling an
    honest change rejects its env and loses its scenarios (rt14-C F1)."""
    try:
        methods = {fn.name: fn for fn in public_methods(find_class(pyast.parse(code), class_name))}
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return {}
    out: dict[str, tuple[Kind, str]] = {}
    for name in names:
        fn = methods.get(name)
        text = ast.get_docstring(fn) if fn else None
        says_read_only = bool(text and (_READ_ONLY.search(text) or NOTHING_CHANGES.search(text)))
        doc = doc_kind(text)  # "Set a note (the id is read-only)." states a change; read-only speaks of something else
        doc = "query" if says_read_only and doc != "state_change" else doc
        if doc is None and unplaced_verb(text) or doc == "query" and goes_on_to_an_unplaced_verb(text):
            continue  # "Seat the party at a table." on `get_a_table` says otherwise: the file's label stands
        declared = name_and_doc(name, doc, text)  # `archive_book` "... without changing anything" keeps its verb (rt13 F5)
        if len({k for _, k in declared}) == 1:
            out[name] = (declared[0][1], " and ".join(src for src, _ in declared))
    return out


def name_and_doc(name: str, doc: Kind | None, text: str | None) -> list[tuple[str, Kind]]:
    """What the name and the docstring `text` (declaring `doc`) declare, by the one rule the import and `envscaler
    validate` share: a name led by a word that may be a noun (`book_details`, `order_items`, `ship_address`), or
    whose words the sentence itself uses past its verb (`transfer_reference` in "Return the transfer reference of
    the payment."), is a noun phrase and declares nothing once the docstring declares a kind, so the sentence
    decides (rt12-C F8); read as a verb and its object it would contradict "Get the order items of the order."
    and let the code decide (rt20-R7 F2). A name the sentence opens with, as its verb and object, is that verb and
    object: `return_item` "Return the item of an active loan." is the act of returning (`return_book_details` "Return
    the details of a book." is not: its object is the details)."""
    by_name, named = name_kind(name), words(name)
    summary = words((parse_docstring(text)[0] or "").split(". ")[0])
    in_sentence = any(summary[i:i + len(named)] == named for i in range(1, len(summary)))
    told = [summary[:1]] + [[t for t in summary[1:] if t not in _ARTICLES][:len(named) - 1]]  # its verb, object
    noun_led = (named or [""])[0] in NOUNISH and told != [named[:1], named[1:]]
    if doc is not None and (noun_led or by_name is None or in_sentence):
        return [("docstring", doc)]
    return [(src, k) for src, k in (("name", by_name), ("docstring", doc)) if k is not None]


# a docstring saying nothing changes declares a query, whatever the name says
_READ_ONLY = re.compile(r"\b(read[- ]only|without (changing|modifying|altering)|does not (change|modify|alter)|"
                        r"no side[- ]effects?|never (changes|modifies))\b", re.IGNORECASE)


def classify_tools(code: str, class_name: str, names: list[str]) -> dict[str, ToolKindLabel]:
    """Heuristic labels (name, docstring, code) for `names`; see the module docstring for the rules."""
    effects = ClassEffects(code, class_name)
    methods = {fn.name: fn for fn in public_methods(find_class(pyast.parse(code), class_name))}
    out: dict[str, ToolKindLabel] = {}
    for name in names:
        fn = methods.get(name)
        writes = effects.writes(name) if fn is not None else []
        attrs = sorted({w.attr for w in writes})
        text = ast.get_docstring(fn) if fn is not None else None
        by_doc = doc_kind(text)
        by_code: Kind = "state_change" if writes else "query"
        code_note = (f"body writes {', '.join('self.' + a for a in attrs)} (line {writes[0].line}: {writes[0].how})"
                     if writes else "body writes no state")
        declared = name_and_doc(name, by_doc, text)
        if not declared and fn is not None and returns_kind(fn) is not None:
            # silent name and docstring: what a success returns (data vs message) is the declaration
            declared = [("returns", returns_kind(fn))]
        kinds = {k for _, k in declared}
        if len(kinds) == 1:
            kind = kinds.pop()
            source = "+".join(src for src, _ in declared) + ("+code" if kind == by_code else "")
            conflict = "" if kind == by_code else " (the code disagrees: the fact decides)"
            evidence = f"declared {kind} by {' and '.join(s for s, _ in declared)}; {code_note}{conflict}"
        else:
            kind, source = by_code, "code"
            why = CONFLICT if declared else SILENT
            evidence = f"{why}; {code_note}"
        out[name] = ToolKindLabel(kind=kind, source=source, evidence=evidence, writes=attrs)
    return out


def merge_llm(heuristic: ToolKindLabel, llm_kind: Kind | None, llm_reason: str = "") -> ToolKindLabel:
    """Add the LLM's reading. It confirms, or it fills a silence: when name and docstring declared
    nothing, the LLM's reading of the purpose replaces the code's. When they contradict each other, or
    were clear and the LLM disagrees, the code's observed writes decide."""
    if llm_kind is None:
        return heuristic
    note = f"; LLM: {llm_kind}" + (f" ({llm_reason[:160]})" if llm_reason else "")
    if llm_kind == heuristic.kind:
        return heuristic.model_copy(update={"source": heuristic.source + "+llm", "evidence": heuristic.evidence + note})
    observed: Kind = "state_change" if heuristic.writes else "query"
    if heuristic.evidence.startswith(SILENT):
        return heuristic.model_copy(update={"kind": llm_kind, "source": "llm", "evidence": heuristic.evidence + note})
    if heuristic.evidence.startswith(CONFLICT):
        return heuristic.model_copy(update={"evidence": heuristic.evidence + note + "; the code decides"})
    kind = observed
    source = "llm+code" if kind == llm_kind else heuristic.source
    return heuristic.model_copy(update={"kind": kind, "source": source,
                                        "evidence": heuristic.evidence + note + "; disagreement settled by the code"})
