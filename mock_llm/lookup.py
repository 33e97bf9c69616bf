"""How the mock finds what a request is about: the library domain (by class, tools or text), the
library scenario (by task), and stable seeds for variety without randomness."""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from mock_llm import library
from mock_llm.library.model import Domain, LibraryScenario
from mock_llm.protocol import MockCannotAnswer

WORD = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
"""A word, for keyword matching and the bag-of-words embedding."""


def stable_seed(*parts: Any) -> int:
    """A stable integer from the payload (variety across tasks without randomness)."""
    text = json.dumps(parts, sort_keys=True, default=str)
    return int(hashlib.sha256(text.encode("utf-8")).hexdigest()[:12], 16)


def canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)


def class_in(code: str) -> str | None:
    """The env class named in `code`: a library class if one is defined (record classes such as
    TypedDicts or dataclasses may come first), else the first base-less top-level class."""
    names = re.findall(r"^class\s+([A-Za-z_]\w*)\s*(\(?)", code, re.MULTILINE)
    known = {d.class_name for d in library.domains()}
    for name, _ in names:
        if name in known:
            return name
    return next((name for name, paren in names if not paren), names[0][0] if names else None)


_SITE_CLASS = re.compile(r"(\w+?)Site(\d+)")


def by_class(class_name: str | None) -> Domain | None:
    """The domain with this class name; `<LibraryClass>Site<N>` is that domain at site N."""
    if not class_name:
        return None
    found = next((d for d in library.domains() if d.class_name == class_name), None)
    site = _SITE_CLASS.fullmatch(class_name)
    if found is None and site is not None:
        base = by_class(site.group(1))
        return library.at_site(base, int(site.group(2))) if base is not None else None
    return found


def by_tools(names: set[str]) -> Domain | None:
    """The domain whose tool set equals `names`, else the one covering most of them (at least half)."""
    best, best_hits = None, 0
    for d in library.domains():
        tools = set(d.tool_kinds)
        if tools == names:
            return d
        hits = len(tools & names)
        if hits > best_hits:
            best, best_hits = d, hits
    return best if names and best_hits * 2 >= len(names) else None


def by_text(*texts: str) -> Domain | None:
    """Exact summary match first (the mock's own topics), then keyword routing."""
    for text in texts:
        key = library.without_site(text).strip().casefold()
        for d in library.domains():
            if key in {s.casefold() for s in d.summary_variants}:
                return library.at_site(d, library.site_of(text))
    return library.route(" ".join(texts))


def need(domain: Domain | None, what: str) -> Domain:
    if domain is None:
        raise MockCannotAnswer(f"no library domain matches this {what}; the mock only knows "
                               f"{[d.name for d in library.domains()]}")
    return domain


def scenario_by_task(task: str) -> tuple[Domain, LibraryScenario]:
    key = task.strip()
    for d in library.domains():
        for sc in d.scenarios:
            if sc.task == key:
                return d, sc
    raise MockCannotAnswer(f"task {task[:80]!r} is not one of the library's scenario tasks")
