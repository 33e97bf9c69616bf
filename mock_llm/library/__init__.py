"""The mock LLM's library: hand-written environment domains the brain answers from.

Each domain is a real env class file under `envs/` (honouring the env-class contract) plus its
metadata under `domains/`: topic texts, rules, tool kinds, routing keywords, state space, initial
states and verified scenarios. Defective variants (`defect` set) are real classes with planted bugs
that validation must reject; they are ordinary topics otherwise.

`domains()` lists healthy domains first. `route(text)` picks a domain by weighted keyword hits
(deterministic; ties go to the earlier domain) or returns None when nothing scores `MIN_SCORE`.

Sites: a text tagged "(site N)" (a source task, a topic summary) is about domain `at_site(N)`: the
same env under its own class name and texts (`Domain.at_site`), so a scale benchmark can grow the
funnel 10x or 100x from the same seven domains. Site copies are made on demand, never listed.
"""

from __future__ import annotations

import re
from functools import lru_cache

from mock_llm.library.domains import clinic, equipment_loans, fitness, insurance, medication, records
from mock_llm.library.domains import surgery_waitlist
from mock_llm.library.model import Domain, LibraryScenario

MIN_SCORE = 2.0

__all__ = ["MIN_SCORE", "Domain", "LibraryScenario", "at_site", "by_name", "domains", "route", "route_scores",
           "site_of", "without_site"]

SITE_TAG = re.compile(r"\s*\(site (\d+)\)")


def site_of(text: str) -> int | None:
    """The site a text is tagged with ("... (site 17)"), or None."""
    match = SITE_TAG.search(text)
    return int(match.group(1)) if match else None


def without_site(text: str) -> str:
    return SITE_TAG.sub("", text)


def at_site(domain: Domain, site: int | None) -> Domain:
    """`domain` at `site` (itself for None); copies are made once per (domain, site)."""
    if site is None or domain.site == site:
        return domain
    return _site_copy(domain.source_class or domain.class_name, site)


@lru_cache(maxsize=8192)
def _site_copy(class_name: str, site: int) -> Domain:
    base = next(d for d in _all() if d.class_name == class_name)
    return base.at_site(site)


@lru_cache(maxsize=1)
def _all() -> tuple[Domain, ...]:
    found = (clinic.DOMAIN, medication.DOMAIN, records.DOMAIN, fitness.DOMAIN, insurance.DOMAIN,
             equipment_loans.DOMAIN, surgery_waitlist.DOMAIN)
    healthy = tuple(d for d in found if d.defect is None)
    return healthy + tuple(d for d in found if d.defect is not None)


def domains() -> list[Domain]:
    """Every domain, healthy ones first (library order within each group)."""
    return list(_all())


def by_name(name: str) -> Domain:
    """A domain by its name, class name or any of its summaries (case-insensitive); KeyError if none."""
    key = name.strip().casefold()
    for d in _all():
        if key in {d.name.casefold(), d.class_name.casefold(), *(s.casefold() for s in d.summary_variants)}:
            return d
    raise KeyError(f"no library domain named {name!r}; known: {[d.name for d in _all()]}")


@lru_cache(maxsize=64)
def _pattern(keyword: str) -> re.Pattern[str]:
    return re.compile(r"\b" + re.escape(keyword.casefold()) + r"(?:s|es)?\b")


def route_scores(text: str) -> list[tuple[Domain, float]]:
    """Each domain with its keyword score for `text`, in library order."""
    folded = text.casefold()
    return [(d, float(sum(w for kw, w in d.keywords.items() if _pattern(kw).search(folded)))) for d in _all()]


def route(text: str) -> Domain | None:
    """The best-scoring domain for `text` (at the site the text names), or None if no domain reaches
    MIN_SCORE."""
    best: tuple[Domain, float] | None = None
    for d, score in route_scores(without_site(text)):
        if score >= MIN_SCORE and (best is None or score > best[1]):
            best = (d, score)
    return at_site(best[0], site_of(text)) if best else None
