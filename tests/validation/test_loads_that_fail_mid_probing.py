"""Spec (red team round 5, F2): a class that loads from the test state once and then fails to load
again (a timeout or a crash while probing) gets a verdict naming the load failure; validation never
ends in an unhandled EnvLoadError.

The class hangs in `__init__` once a deadline has passed: the first load (the test state's) comes
before it, and the probes, each a fresh episode that takes a second in its tool, run past it. That is
what an `__init__` that hangs at random, or a host too loaded to load in time, does to a pass."""

from __future__ import annotations

import asyncio
import time

from envscaler_core.config import Settings
from envscaler_core.models import EnvCandidate
from envscaler_core.synth import extract_tools
from envscaler_core.validation import validate_candidate

PROGRAMMATIC = Settings.model_validate({"validate": {"mode": "programmatic"}})
STATE = {"books": {"b1": {"title": "Dune", "available": True}}}


def hangs_after(deadline: float) -> str:
    """A library whose `__init__` hangs past the sandbox's load limit once `deadline` (epoch s) passed."""
    return f'''
import time


class Lib:
    """A lib."""
    def __init__(self, init_config=None):
        self.books = {{}}
        if time.time() > {deadline!r}:
            time.sleep(60)

    def get_book(self, book_id: str) -> dict:
        """Get a book by id."""
        time.sleep(1)
        b = self.books.get(book_id)
        if b is None:
            return {{"success": False, "error": "no such book"}}
        return {{"success": True, "data": b}}

    def lend_book(self, book_id: str) -> dict:
        """Lend an available book."""
        time.sleep(1)
        b = self.books.get(book_id)
        if b is None or not b.get("available"):
            return {{"success": False, "error": "not available"}}
        b["available"] = False
        return {{"success": True, "message": "lent"}}
'''


def test_a_load_that_times_out_while_probing_rejects_the_class_naming_it(runtime) -> None:  # type: ignore[no-untyped-def]
    warm = runtime.open_episode(hangs_after(time.time() + 3600), "Lib", STATE)  # the pool's first unit starts here
    warm.close()
    code = hangs_after(time.time() + 2.0)
    cand = EnvCandidate(topic_fp="t", class_name="Lib", class_code=code, tools=extract_tools(code, "Lib"))

    out = asyncio.run(validate_candidate(cand, runtime, None, PROGRAMMATIC, test_state=STATE))

    assert not out.report.accepted and out.env is None
    why = out.report.critical[0]
    assert "did not load again" in why and "loading Lib failed: timeout" in why, out.report.critical
    assert out.failure == why
