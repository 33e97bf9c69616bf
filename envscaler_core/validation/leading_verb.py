"""The kind a tool name's or a docstring sentence's leading verb declares (`verb_kind`), read with what follows
the verb: a lookup verb may lead a change ("Lists a car for sale.", "Sort the ticket into the done column."), and
"Return ..." may hand data back or send a thing somewhere ("Return the details of a loan." vs "Returns the book
to the library."). `tool_kinds` reads the rest of a docstring (participles, passives, later clauses) on top of
this and decides between name, docstring and code."""

from __future__ import annotations

from typing import Literal

from envscaler_core.validation.clauses import STATES, words
from envscaler_core.validation.placements import COUNTING, PLACES, placed
from envscaler_core.validation.verb_lexicon import COMPOUND_STATE, NOUNISH, QUERY_VERBS, STATE_VERBS

Kind = Literal["query", "state_change"]

DETERMINERS = frozenset({"a", "an", "the", "one", "this", "that", "these", "those", "all", "each", "every", "new",
                         "some", "any", "whether", "how", "what", "which", "its", "their", "his", "her", "my",
                         "your", "our", "up", "down", "in", "out", "off", "to", "for"})


def stem(word: str) -> str:
    """'cancels' -> 'cancel', 'retrieves' -> 'retrieve', 'identifies' -> 'identify', 'lists' stays known."""
    if word in QUERY_VERBS or word in STATE_VERBS:
        return word
    for suffix, base in (("ies", "y"), ("es", ""), ("s", "")):
        if word.endswith(suffix) and known(word[: -len(suffix)] + base):
            return word[: -len(suffix)] + base
    return word


def known(word: str) -> bool:
    return word in QUERY_VERBS or word in STATE_VERBS


# "List an item for sale" puts it on the market; "List the items for sale" looks them up (rt14-C F1)
_ON_THE_MARKET = (("for", "sale"), ("for", "rent"), ("for", "lease"), ("for", "hire"), ("on", "the", "market"),
                  ("on", "the", "marketplace"))
ARTICLES = frozenset({"a", "an", "the", "one", "this", "my", "your", "our", "their", "his", "her", "its"})


def _puts_on_the_market(tokens: list[str]) -> bool:
    """`list` whose one object is offered for sale or rent: the first word after the articles is singular."""
    text = " " + " ".join(tokens) + " "
    if not any(f" {' '.join(phrase)} " in text for phrase in _ON_THE_MARKET):
        return False
    rest = [t for t in tokens[1:] if t not in ARTICLES]
    head = rest[0] if rest else ""
    plural = head.endswith("s") and not head.endswith("ss")
    return not plural and head not in ("all", "every", "each", "available", "current", "currently", "open")


# rt17-C F2: one thing listed on a platform or for a purpose is put up there ("List a property on the rental
# platform.", "List a room for booking.", "List the item as sold."); a plural, a quantifier or data is looked up
_PLATFORMS = frozenset({"platform", "site", "website", "store", "shop", "catalog", "catalogue", "marketplace", "market",
                        "storefront", "app", "board", "listings", "exchange", "portal", "window", "directory"})
_PURPOSES = frozenset({"sale", "rent", "rental", "lease", "hire", "auction", "lending", "adoption", "trade", "charter",
                       "swap", "exchange", "bidding", "purchase", "subscription", "donation", "loan", "reservation"})
QUANTIFIERS = frozenset({"all", "every", "each", "any", "some", "available", "current", "currently", "open", "both"})
# words that end a noun phrase: "a car *for* sale", "the apartment *on* the site", "a member*'s* loans" goes on
PHRASE_ENDS = frozenset({"for", "on", "in", "at", "to", "toward", "towards", "with", "by", "from", "of", "as", "under",
                         "into", "onto",
                         "via", "and", "or", "within", "across", "over", "that", "which", "who", "where", "if"})
_INDEFINITE = frozenset({"a", "an", "one"})


def plural(word: str) -> bool:
    return len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is"))


def object_phrase(tokens: list[str]) -> tuple[list[str], int, list[str], list[str]]:
    """A sentence's words after its verb, whether an article leads them, the object's noun phrase (up to a
    preposition or a connective) and what follows it: "List [the] [apartment] [on the rental site]"."""
    rest = tokens[1:]
    start = 1 if rest and rest[0] in ARTICLES else 0
    phrase: list[str] = []
    for token in rest[start:]:
        if token in PHRASE_ENDS:
            break
        phrase.append(token)
    return rest, start, phrase, rest[start + len(phrase):]


def _lists_one_thing(tokens: list[str]) -> bool:
    """A docstring's `list`/`lists` whose object is one thing put up somewhere: an indefinite article ("Lists a
    car for sale.", "List a bike."), or a singular object then a purpose, a platform or a state ("List the
    apartment on the rental site.", "List the item as sold."). "List the books in the store." and "List a
    member's loans." look up (a plural), as do "List all items for sale." and "List a summary of ..."."""
    rest, start, phrase, after = object_phrase(tokens)
    if not phrase or phrase[0] in QUANTIFIERS or any(map(plural, phrase)) or phrase[-1] in _DATA_NOUNS:
        return False
    if start and rest[0] in _INDEFINITE:
        return True
    link, what = (after + ["", ""])[:2]
    return (link == "for" and (what in _PURPOSES or what.endswith("ing"))
            or link in ("on", "in", "at") and any(t in _PLATFORMS for t in after[1:5])
            or link == "as" and (what in STATES or what.endswith("ed")))


def _places_one_thing(first: str, tokens: list[str]) -> bool:
    """A placing lookup verb ("sort", "export", "show", ...) whose object is put somewhere (see `placed`)."""
    rest, start, phrase, after = object_phrase(tokens)
    sent = after[:1] in (["to"], ["into"]) and any(t in PLACES for t in after[1:5])  # "the report to the archive folder"
    if not phrase or phrase[0] in QUANTIFIERS or phrase[-1] in _DATA_NOUNS and not sent:
        return False
    singular = not any(map(plural, phrase))
    counted = first in COUNTING and singular and phrase[-1] not in _OWED and _counted_in(after)
    return counted or placed(first, phrase, after, singular)


def _counted_in(after: list[str]) -> bool:
    """What follows one thing counted or tallied, whose owner ("of the voter") may come first: credited to someone
    ("for the candidate", "towards the total") or entered in a tally ("in the election results"), it is added
    (rt21-R9 F2); "Count the cash in the till." counts one thing where it lies, and "Count the vote of the member."
    says whose, not where."""
    if after[:1] == ["of"]:  # whose thing it is: "the ballot [of the voter] in the election results"
        after = after[next((i for i, t in enumerate(after) if t in _COUNTED_INTO), len(after)):]
    link, det = (after + ["", ""])[:2]
    if link not in _COUNTED_INTO or det not in ARTICLES:
        return False
    where = [t for t in after[2:] if t not in ARTICLES]
    place = where[:next((i for i, t in enumerate(where) if t in PHRASE_ENDS), len(where))]
    return link != "in" or bool(place) and place[-1] in _DATA_NOUNS  # "in the match results", not "in the till"


# money owed, summed for whoever owes it: "Tally the bill for the guest." adds nothing to anyone (rt22-R14 F5)
_OWED = frozenset({"bill", "tab", "sum", "total", "balance", "invoice", "check", "cheque", "dues", "fare", "cost"})
# what one counted thing is credited to or entered in
_COUNTED_INTO = frozenset({"for", "in", "into", "to", "towards", "toward"})


# a question a "Return ..." hands back: "Return whether the venue is open.", "Return how many seats are left."
_QUESTIONS = frozenset({"whether", "if", "how", "what", "which", "who", "whom", "whose", "when", "where", "why"})


def _returns_to_a_place(tokens: list[str]) -> bool:
    """"Return(s) <a thing> to <a place>", in any person: one thing, not data, sent back somewhere other than to whoever
    asked ("Returns a borrowed book to the library.", "Returns the scooter of the rider to the dock."); "Returns the
    details of ... to the caller" looks up."""
    _, _, phrase, after = object_phrase(tokens)
    if tokens[1:2] and tokens[1] in _QUESTIONS:  # "Returns whether the book can go back to the library." asks
        return False
    if after[:1] == ["of"] and "to" in after:  # whose thing it is: "the scooter [of the rider] to the dock"
        after = after[after.index("to"):]
    to, det, where = (after + ["", "", ""])[:3]
    return bool(phrase) and phrase[-1] not in _DATA_NOUNS and not any(map(plural, phrase)) \
        and to == "to" and det in ARTICLES and where not in _RECIPIENTS and not takes_to_itself(phrase)


def _sent_somewhere(tokens: list[str]) -> bool:
    """"Return(s) <something>" with a destination: "into", "onto", "back", or "to" a place or a person other than
    whoever asks ("to the dock", "to stock", "to the customer"). "to the caller" names who asks and "to pay" is an
    infinitive; a question ("Return whether ...", "Return how many ...") hands its answer back, so it is sent
    nowhere. Sent nowhere, "Return X" hands data back whatever X is (rt20-R7 F1, rt21-R9 F1)."""
    tail = tokens[1:]
    if tail[:1] and tail[0] in _QUESTIONS:
        return False
    for i, token in enumerate(tail):
        if token in ("into", "onto", "back"):
            return True
        following = tail[i + 1] if i + 1 < len(tail) else ""
        if token == "to" and takes_to_itself(_phrase_before(tail[:i])):
            continue  # "the route to the gate", "the amount owed to the bank": the noun's own "to" (rt22-R14 F1)
        if token == "to" and following not in QUERY_VERBS | STATE_VERBS | {"be"}:  # "to pay", "to be filed"
            if next((w for w in tail[i + 1:] if w not in ARTICLES), "") not in _RECIPIENTS:
                return True
    return False


# nouns that take "to" themselves: "the route to the gate", "the distance to the berth", "the ratio to the target"
_RELATIONAL = frozenset({"route", "routes", "path", "paths", "way", "ways", "distance", "distances", "directions",
                         "ratio", "rate", "rates", "journey", "trip", "connection", "connections", "access", "road",
                         "entrance", "exit", "approach", "proximity", "answer", "reply", "response", "introduction"})
# adjectives that take "to" after the noun ("the refund due to the passenger", "the exhibit closest to the door"), and
# modifiers that make the "to" the noun's, wherever they stand ("the next flight to Paris", "the nearest exit to ...")
_TAKING_TO = frozenset({"due", "owed", "owing", "payable", "closest", "nearest", "close", "near", "closer", "nearer",
                        "adjacent", "next", "prior", "similar", "equal", "related", "relevant", "available", "open",
                        "subject", "liable", "entitled", "bound", "headed", "destined", "sent", "lent", "given"})
_TO_MODIFIERS = frozenset({"next", "nearest", "closest", "shortest", "fastest", "quickest", "cheapest", "direct"})
# nouns ending in -ed, not participles
_ED_NOUNS = frozenset({"bed", "beds", "shed", "sled", "seed", "feed", "speed", "need", "reed", "weed", "steed", "red"})


def _phrase_before(tokens: list[str]) -> list[str]:
    """The noun phrase right before a position, its articles left out: "... the walking [route]", "[crew assigned]"."""
    phrase: list[str] = []
    for token in reversed(tokens):
        if token in PHRASE_ENDS or token in ("return", "returns"):
            break
        if token not in ARTICLES:
            phrase.insert(0, token)
    return phrase


def takes_to_itself(phrase: list[str]) -> bool:
    """The noun phrase before a "to" takes it itself, so nothing is sent anywhere (rt22-R14 F1): a relational noun
    ("the shortest route to the terminal"), an adjective or a participle after the noun ("the amount owed to the
    bank", "the crew assigned to the flight", "the exhibit closest to the entrance") or a modifier of nearness or
    order ("the next flight to Paris"). A destination is "to" right after the returned thing itself."""
    if not phrase:
        return False
    last = phrase[-1]
    after_a_noun = len(phrase) > 1 and last.endswith("ed") and last not in _ED_NOUNS
    return (last in _RELATIONAL or last in _TAKING_TO or after_a_noun
            or any(t in _TO_MODIFIERS for t in phrase))


def _returns_data(tokens: list[str]) -> bool:
    """"Return the details of a book", "Return the book's details", "Return the vote count of a candidate": the
    object is data (after a possessive or a noun modifier), handed back wherever the sentence goes on."""
    rest = [t for t in tokens[1:] if t not in DETERMINERS]
    while len(rest) > 2 and rest[1] == "s":  # "Return the book's details": the possessive names whose (rt17-C F3)
        rest = rest[2:]
    # "Return the vote count of a candidate.": the data noun may follow a noun modifier (rt18-R2 F2)
    return bool(rest) and (rest[0] in _RETURNED_DATA or len(rest) > 1 and rest[1] in _DATA_NOUNS and rest[0] != "of")


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
                                          "label", "code", "stage", "step", "type", "mode", "limit", "deadline",
                                          "hour", "hours", "day", "days", "minute", "minutes", "moment"})
# who a lookup hands its answer to: "Returns the item to the caller." is a lookup, "... to the store" a return
_RECIPIENTS = frozenset({"caller", "user", "client", "requester", "agent", "frontend", "application", "app", "ui", "api"})


def verb_kind(tokens: list[str], *, in_name: bool) -> Kind | None:
    """The kind the leading verb declares; `get_or_create` and `find_and_remove` count their second verb."""
    if not tokens:
        return None
    if tuple(tokens[:2]) in COMPOUND_STATE:
        return "state_change"
    first = tokens[0] if in_name else stem(tokens[0])  # names use the base verb: `books_by_author` is a noun
    if in_name and (first in NOUNISH or first in STATE_VERBS) and len(tokens) > 1 and tokens[1] in _DATA_NOUNS:
        return None  # `vote_count`, `order_status`, `merge_status`, `cancel_reason`: a noun phrase (rt19-R4 F1/F2);
    # the docstring or the code decides
    if first in ("return", "returns") and not in_name:  # "Return ..." and "Returns ..." read alike (rt21-R9 F1)
        if _returns_to_a_place(tokens):
            return "state_change"  # "Returns a rented item to the store.": the physical return (rt19-R4 F4)
        if _sent_somewhere(tokens) and not _returns_data(tokens):
            return None  # "Return the books to the shelf.": sent somewhere, but not one thing; name or code decides
        # sent nowhere, it hands data back ("Return all closed cases."); a later "and close it" may still change
    if not in_name and first == "check" and _checks_one_thing_somewhere(tokens[1:8]):
        return "state_change"  # "Check the guest into the room", "Check the bag onto the flight": check in/out/off
    if not in_name and first == "report" and _returns_data(tokens):
        return "query"  # "Report the outstanding balance of the account." hands data back, "Report it as lost" changes
    if not in_name and first in NOUNISH - {"return"} and (len(tokens) < 2 or tokens[1] not in OBJECT_WORDS):
        return None  # "Order workflow step." starts with a noun; "Order a pizza." and "Hold it." with a verb
    kind: Kind | None = "query" if first in QUERY_VERBS else "state_change" if first in STATE_VERBS else None
    if first == "return" and in_name:
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
        if in_name and stem(follower) != follower:
            continue  # `view_item_and_reviews`, `show_post_and_replies`: in a name a plural is the object (rt15 F2)
        # `get_book_and_review`, `get_order_and_ship_date`, `get_member_and_loan`, `member_and_loan`: after a noun
        # `and` pairs two nouns; the docstring decides (rt16-R F2, rt17-C F3)
        noun_pair = in_name and (i > 1 or kind is None)
        if not in_name and follower == "return":
            continue  # "Find a book and return it": a lookup's answer, not the act of returning (rt16-R F2)
        # in a sentence, a change verb needs its object: "Get the member and loan." and "Get the event and register
        # info." pair nouns (rt17-C F3)
        if not in_name:
            follower = stem(follower)  # "... and closes the rental": a change in any person (rt19-R4 F4)
        has_object = after in OBJECT_WORDS or follower not in NOUNISH and after and after not in _DATA_NOUNS
        if follower in STATE_VERBS and not noun_pair and (in_name or has_object):
            return "state_change"  # "... and record it", "Check availability and book the room." (rt15 F1)
        if in_name and kind == "query" and follower not in QUERY_VERBS:
            kind = None  # `read_and_reply`, `view_and_acknowledge_alert`: a later verb we cannot place (rt14-C F1)
    return kind


def _checks_one_thing_somewhere(tail: list[str]) -> bool:
    """"Check" then a thing moved in, out, off, onto or through to somewhere ("Check the guest into the room.", "Check
    the item off the list.", "Check the bag onto the flight.", "Check the bag through to Rome.": rt22-R14 F4); a
    question ("Check whether it is through to ...") asks."""
    if any(t in ("whether", "if", "that", "how") for t in tail):
        return False
    return any(t in ("into", "out", "off", "onto") or t == "through" and nxt == "to"
               for t, nxt in zip(tail, tail[1:] + [""]))


# pronouns that stand for a verb's object: "... and record it", "... and pair them"
PRONOUNS = frozenset({"it", "them", "him", "her", "one"})
# after a word that may be a noun ("record", "book", "order", "log"), these make it a verb with its object
OBJECT_WORDS = DETERMINERS | PRONOUNS


def name_kind(name: str) -> Kind | None:
    return verb_kind(words(name), in_name=True)
