"""Clause shapes the label rule of `tool_kinds` reads (rt19-R4), each by the sentence's structure so that a verb
in any tense, person or subject reads alike: a clause saying a change is *not* made ("No changes are made.", "it
is never archived", "without marking it"), a passive of a lookup verb ("is looked up", "are counted"), a change
verb's participle used as an adjective ("the merged records"), the clauses after a semicolon, a colon or an
inserted condition ("Get the item; archive it.", "... and, if it is pending, approve it"), and a causative
making one thing be a state ("Render the item unavailable.", "Get the item ready for shipping.")."""

from __future__ import annotations

import re

from envscaler_core.validation.verb_lexicon import QUERY_VERBS, STATE_VERBS

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


_HYPHEN = re.compile(r"(?<=[A-Za-z])-(?=[A-Za-z])")


def words(text: str) -> list[str]:
    """The lower-case words of a name or a sentence. A hyphenated word is one word ("the check-in total" ->
    "checkin"): read as two, its second half ("in", "up", "off") would end the noun phrase it modifies (rt22-R15 F2)."""
    return [w for w in re.split(r"[^a-z0-9]+", _CAMEL.sub("_", _HYPHEN.sub("", text)).lower()) if w]


# past participles of change verbs that are no `-ed` of their base
IRREGULAR = frozenset({"set", "reset", "sent", "paid", "sold", "made", "given", "taken", "put", "written", "lent",
                       "frozen", "hidden", "withdrawn", "overwritten", "bought", "done", "shut", "cut"})
# states one thing is put in or made to be ("List the item as sold.", "Render the item unavailable.")
STATES = frozenset({"available", "unavailable", "active", "inactive", "open", "closed", "sold", "public", "private",
                    "visible", "hidden", "featured", "pending", "new", "used", "live", "overdue", "late", "due",
                    "read", "unread", "ready", "invalid", "valid", "void", "obsolete", "free", "busy", "full", "empty",
                    "online", "offline", "complete", "eligible", "ineligible", "invisible", "unusable", "out"})


def participle(word: str, verbs: frozenset[str]) -> bool:
    """`created`, `shipped`, `verified`, `paid`: a past participle of one of `verbs`."""
    if word in IRREGULAR:
        return True
    if not word.endswith("ed") or len(word) < 5:
        return False
    base = word[:-2]
    return any(b in verbs for b in (base, base + "e", base[:-1], base[:-1] + "y" if base.endswith("i") else base))


def change_ing(word: str) -> bool:
    """`setting`, `marking`, `creating`: a change verb's -ing form."""
    if not word.endswith("ing") or len(word) < 5:
        return False
    base = word[:-3]
    return any(b in STATE_VERBS for b in (base, base + "e", base[:-1] if base[-1:] == base[-2:-1] else base))


_NEGATORS = frozenset({"no", "nothing", "none", "not", "never", "neither", "nor", "without", "nobody"})
_CONDITIONS = frozenset({"if", "whether", "unless", "when", "once", "until", "whenever"})
_AUX = frozenset({"is", "are", "was", "were", "be", "been", "gets", "get", "got", "becomes", "will", "would", "has",
                  "have", "had"})
_CLAUSE_BREAK = re.compile(r"([,;:()]|\.\s|\s[-\u2013\u2014]\s)")


def negated_change(clause: str) -> bool:
    """A clause stating a change is not made, whatever its subject or tense: a negator, then a change verb's passive
    participle after an auxiliary ("No changes are made.", "it is not archived", "no loan will be created") or its
    -ing form ("without marking it as seen", "never updating it"). A condition ("if it is not archived") picks."""
    tokens = words(clause)
    if not tokens or any(t in _CONDITIONS for t in tokens):
        return False
    first = next((i for i, t in enumerate(tokens) if t in _NEGATORS), None)
    if first is None:
        return False
    passive = any(t in _AUX for t in tokens)
    return any(passive and participle(t, STATE_VERBS) or change_ing(t) for t in tokens[first + 1:])


def without_negated_changes(text: str) -> tuple[str, bool]:
    """`text` with its negated-change clauses left out, and whether it had one."""
    pieces = _CLAUSE_BREAK.split(text)
    kept = ["" if i % 2 == 0 and negated_change(piece) else piece for i, piece in enumerate(pieces)]
    return "".join(kept), kept != pieces


def lookup_passive(text: str) -> bool:
    """A clause with a lookup verb's passive ("The item is looked up by its id.", "are counted and reported"),
    not one putting a thing somewhere ("is shown on the homepage", "is checked out")."""
    for clause in _CLAUSE_BREAK.split(text.lower())[::2]:
        tokens = words(clause)
        for aux, pp, after in zip(tokens, tokens[1:], tokens[2:] + [""]):
            if aux in _AUX and participle(pp, QUERY_VERBS) and not participle(pp, STATE_VERBS) \
                    and after not in ("to", "into", "on", "onto", "with", "as", "in", "out", "off", "for"):
                return True
    return False


def adjective_participle(tokens: list[str], at: int, articles: frozenset[str]) -> bool:
    """The word at `at` ends a noun phrase an article opens, its modifiers participles or states: "the merged
    records", "the queued records"; so it is a noun, not a conjugated verb."""
    j = at - 1
    while j > 0 and (tokens[j].endswith("ed") or tokens[j] in IRREGULAR or tokens[j] in STATES):
        j -= 1
    return j < at - 1 and tokens[j] in articles


_CONDITION_INSERT = re.compile(r",\s*(?:if|when|once|unless|after|before|whenever|where)\b[^,;:]*,", re.IGNORECASE)
_CONDITION_LEAD = re.compile(r"^\s*(?:if|when|once|unless|after|before|whenever)\b[^,]*,", re.IGNORECASE)
_LINK_LEAD = re.compile(r"^\s*(?:and\s+then|and|then|also)\b", re.IGNORECASE)


def without_inserted_conditions(sentence: str) -> str:
    """"Fetch the item and, if it is pending, approve it." reads as "Fetch the item and approve it.": the condition
    says when, the verb after it still says what the call does."""
    return _CONDITION_INSERT.sub(" ", sentence)


def later_clauses(sentence: str) -> list[list[str]]:
    """The words of each clause after a semicolon, a colon or a dash, its leading condition and link left out:
    "Look up the item; if it is pending, approve it." -> [["approve", "it"]]."""
    parts = re.split(r"[;:]|\s[-\u2013\u2014]\s", sentence)[1:]
    return [words(_LINK_LEAD.sub("", _CONDITION_LEAD.sub("", part))) for part in parts]


_CAUSATIVES = {"render": STATES, "renders": STATES, "get": frozenset({"ready"}), "gets": frozenset({"ready"})}


def made_a_state(tokens: list[str], articles: frozenset[str], phrase_ends: frozenset[str]) -> bool:
    """A causative making one thing be a state: "Render the item unavailable.", "Get the order ready for pickup."
    (`get` only with "ready": "Get the seats available for booking." picks which)."""
    states = _CAUSATIVES.get(tokens[0] if tokens else "")
    if not states or len(tokens) < 4 or tokens[1] not in articles:
        return False
    for i in range(3, min(len(tokens), 7)):
        if tokens[i] in states:
            after = tokens[i + 1] if i + 1 < len(tokens) else ""
            return not any(t.endswith("s") and not t.endswith("ss") for t in tokens[2:i]) \
                and (after in phrase_ends or after == "")
    return False
