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
`verb_lexicon`; `leading_verb` reads what a name's or a sentence's leading verb declares with its object
("Lists a car for sale."), and the rules here read the rest of the docstring (a participle clause, a passive,
a later clause, a causative `get`) and decide between name, docstring and code.
"""

from __future__ import annotations

import ast
import re

from envscaler_core import pyast
from envscaler_core.models.validation import ToolKindLabel
from envscaler_core.synth.tool_schema import find_class, parse_docstring, public_methods
from envscaler_core.validation.class_effects import ClassEffects
from envscaler_core.validation.clauses import (
    adjective_participle, change_ing, later_clauses, lookup_passive, made_a_state, participle,
    without_inserted_conditions, without_negated_changes, words)
from envscaler_core.validation.leading_verb import (
    ARTICLES, DETERMINERS, OBJECT_WORDS, PHRASE_ENDS, PRONOUNS, QUANTIFIERS, Kind, known, name_kind, object_phrase,
    plural, stem, verb_kind)
from envscaler_core.validation.placements import IN_THE_RESULT, LOOKUP_PASSIVE, NOTHING_CHANGES
from envscaler_core.validation.verb_lexicon import NOUNISH, PEOPLE, QUERY_VERBS, STATE_VERBS

SILENT = "name and docstring declare nothing"
CONFLICT = "name and docstring disagree"


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
    condition ("Check whether the book is reserved." and "the orders that were removed" pick, they do not change),
    picks no record ("the date the invoice was paid", rt22-R14 F2) and is on no schedule ("Rates are updated
    hourly.": the provider's doing, not the call's)."""
    for clause in re.split(r"[,;:()]|\. ", sentence.lower()):
        raw = words(clause)
        tokens = [t for t in raw if t not in ("then", "also", "automatically", "immediately", "always")]
        if NOTHING_CHANGES.search(clause) or any(t in _CONDITIONS for t in tokens) \
                and not (raw[:1] == ["which"] and "then" in raw):  # ", which is then marked as redeemed" (rt18-R2 F3)
            continue
        if _picks_a_record(tokens) or any(t in _SCHEDULED or t == "every" and (nxt in _PERIODS or nxt.isdigit())
                                          for t, nxt in zip(tokens, tokens[1:] + [""])):
            continue
        # "The book's record is returned." hands data back; "the form to be filed" is yet to be done, not done
        if any(aux in _PASSIVE_AUX and participle(pp, STATE_VERBS) and pp not in ("returned", "given")
               and not (aux == "be" and before == "to")
               for before, aux, pp in zip([""] + tokens, tokens, tokens[1:])):
            return True
    return False


# nouns a clause after them picks: "the time the parcel was released", "the reason (why) the card was locked"
_PICKED_BY_A_CLAUSE = frozenset({"time", "times", "date", "day", "hour", "moment", "minute", "year", "month", "week",
                                 "reason", "way", "place", "occasion", "night", "morning", "evening", "period"})
# a passive on a schedule or by someone else is no effect of the call: "Rates are updated hourly."
_SCHEDULED = frozenset({"hourly", "daily", "nightly", "weekly", "monthly", "yearly", "annually", "quarterly",
                        "periodically", "regularly", "provider", "supplier", "vendor", "upstream"})
_PERIODS = frozenset({"hour", "day", "night", "week", "month", "year", "minute", "morning", "evening", "second"})


def _picks_a_record(tokens: list[str]) -> bool:
    """The clause's passive has its subject inside the object's noun phrase: "the date the invoice was paid", "the
    number of times the book was borrowed", "the hour when the shipment was dispatched" (a contact or relative clause
    saying which record, rt22-R14 F2), not "the invoice was paid" said of what the call does."""
    return any(noun in _PICKED_BY_A_CLAUSE and (link in ARTICLES or link in ("when", "why", "where")
                                                 and nxt in ARTICLES)
               for noun, link, nxt in zip(tokens, tokens[1:], tokens[2:] + [""]))


def _causative(tokens: list[str]) -> bool:
    """"Get the document signed by the client.", "Have the car washed.": `get`/`have`, one thing, then a past
    participle ending the phrase. A plural or a participle that says which one looks up ("Get the books borrowed
    by a member.", "Get the ticket assigned to the agent.")."""
    if not tokens or tokens[0] not in ("get", "gets", "have", "has") or len(tokens) < 4 or tokens[1] not in ARTICLES:
        return False
    for i in range(3, min(len(tokens), 7)):
        pp, before, after = tokens[i], tokens[i - 1], (tokens[i + 1] if i + 1 < len(tokens) else "")
        # "Get the room booked for the guest.": done for someone, not saying which one (rt22-R14 F3); "for the
        # case", "for the dock door" say which one, so the participle picks a record (rt22-R15 F1)
        for_someone = after == "for" and (tokens[i + 2:i + 3] or [""])[0] in ARTICLES and _someone(tokens[i + 3:])
        if participle(pp, STATE_VERBS | QUERY_VERBS) and (pp not in _WHICH_ONE or for_someone):
            return (before not in ARTICLES | {"s"} and not any(map(plural, tokens[2:i]))
                    and after in PHRASE_ENDS | {"", "before", "after", "today", "now"})
    return False


def _someone(tokens: list[str]) -> bool:
    """The noun phrase `tokens` opens (after its article) names someone: its head, before a preposition, is a person,
    a role or a party ("the guest", "the new hire", "the party of four"), not a thing ("the case", "the dock door")."""
    phrase = [t for t in tokens[:next((i for i, t in enumerate(tokens) if t in PHRASE_ENDS), len(tokens))]
              if t not in ARTICLES]
    return bool(phrase) and (phrase[-1] in PEOPLE or phrase[-1].endswith("holder"))  # "policyholder", "cardholder"


def goes_on_to_an_unplaced_verb(doc: str | None) -> bool:
    """The first sentence goes on, after "and"/"then", to a verb we cannot place with its object ("Find a match
    for the player and pair them."): it says something other than a lookup (rt16-R F3)."""
    summary, _ = parse_docstring(doc)
    tokens = words((summary or "").split(". ")[0])
    return any(link in ("and", "then") and not known(stem(verb)) and verb not in DETERMINERS
               and verb not in _LEAD_INS and after in _OBJECT_START | PRONOUNS
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
                                       for clause in later_clauses(sentence)) or made_a_state(tokens, ARTICLES, PHRASE_ENDS)):
        return "state_change"  # "Get the item; archive it.", "Render the item unavailable." (rt19-R4 F4)
    # "Count the records.": after an article a conjugated change verb is a plural noun (rt18-R2 F1/F2)
    if kind != "state_change" and not IN_THE_RESULT.search(sentence) and any(
            t in _TELLING_CHANGES and before not in ARTICLES | QUANTIFIERS
            and not adjective_participle(tokens, i + 1, ARTICLES | QUANTIFIERS)  # "the merged records" (rt19-R4 F1)
            for i, (before, t) in enumerate(zip(tokens, tokens[1:]))):
        return "state_change"
    if kind != "state_change" and any(by == "by" and change_ing(t) and after in _OBJECT_START | PRONOUNS
                                      for by, t, after in zip(tokens[1:], tokens[2:], tokens[3:])):
        return "state_change"  # "Show the item in the storefront by setting its visible flag." (rt16-R F3)
    # a participle or passive anywhere in the summary's paragraph, not only its first sentence (rt18-R2 F3)
    first_clause = words(re.split(r"[;:,(]", sentence)[0])  # "Get the item; it is archived" is no causative
    # "Get the room booked for the guest. Nothing is changed.": the declaration outweighs the causative (rt22-R15 F1)
    causative = _causative(first_clause) and not negated
    if kind != "state_change" and (_participle_clause(summary) or _passive_change(summary) or causative):
        return "state_change"  # ", setting it visible", "a new cart is created", "Get the document signed" (rt17-C F2)
    if kind != "state_change" and any(t in _TELLING_WITH_OBJECT and after in OBJECT_WORDS
                                      for t, after in zip(tokens[1:], tokens[2:])):
        return "state_change"  # "Print the shipping label (sets the order status to labelled)." (rt15 F1)
    if kind is None and (LOOKUP_PASSIVE.search(sentence) or lookup_passive(sentence) or negated
                         or _ASKS_A_VALUE.match(summary)):
        # "The book's details are returned.", "is looked up", "No changes are made." (rt18-R2, rt19-R4 F1), "What is
        # the balance of the account?" (rt22-R15 F3)
        return "query"
    return kind


# a question asking for a value, as its first sentence, declares a lookup: "What is the balance of the account?",
# "Which rooms are free?", "How many seats are left?" ("What happens if ...?" asks no value)
_ASKS_A_VALUE = re.compile(r"\s*(?:(?:what|who)\s+(?:is|are|was|were)\b|which\b|how\s+(?:many|much|long|often|far)\b)"
                           r"[^.!?]*\?", re.IGNORECASE)


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
    if known(stem(first)) or first in DETERMINERS or first in _LEAD_INS or second not in _OBJECT_START:
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
    first = (parse_docstring(text)[0] or "").split(". ")[0]
    summary = words(first)
    # `check_in_time` "Return the check-in time of the hotel.": the name spells the hyphenated word as two
    in_sentence = any(said[i:i + len(named)] == named for said in (summary, words(first.replace("-", " ")))
                      for i in range(1, len(said)))
    noun_led = (named or [""])[0] in NOUNISH and not _opens_with(named, summary)
    # `count_vote` "Count the vote for the candidate.", `get_room_booked` "Get the room booked for the guest.": the
    # sentence reads the name's own verb with its object, which makes the lookup verb a change; the name's bare verb
    # says no more (rt22-R14 F5: validate said "from code")
    same_verb_changes = doc == "state_change" and by_name == "query" and bool(named) and bool(summary) \
        and stem(summary[0]) == stem(named[0]) \
        and (verb_kind(summary, in_name=False) == "state_change" or _causative(summary))  # "Get the room booked for"
    if doc is not None and (noun_led or by_name is None or in_sentence or same_verb_changes):
        return [("docstring", doc)]
    return [(src, k) for src, k in (("name", by_name), ("docstring", doc)) if k is not None]


def _opens_with(named: list[str], summary: list[str]) -> bool:
    """The sentence opens with the name as its verb, in any person, and its object: the object's first words or its
    head noun. `return_item` "Return the item of an active loan." and `return_bond` "Returns the security bond of the
    renter." are the act of returning it (rt21-R9 F3: a refund the name says is one)."""
    if not named or not summary or summary[0] not in (named[0], named[0] + "s", named[0] + "es"):
        return False
    size = len(named) - 1
    _, _, phrase, _ = object_phrase(summary)
    return not size or [t for t in summary[1:] if t not in ARTICLES][:size] == named[1:] or phrase[-size:] == named[1:]


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
