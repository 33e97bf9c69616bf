"""Spec: the host's reading of what a class's tools write costs linear time and memory in the class,
and a class past the documented limit is refused with a reason naming it (sandbox red team round 5,
F1: 60 helpers that each call the next two took 13 GB and crashed an import)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from envscaler_core.interop.envjob import judge_env
from envscaler_core.validation.class_effects import MAX_FOLDED_FACTS, AnalysisTooLarge, ClassEffects
from tests.interop.conftest import settings_for
from tests.interop.test_env_verdicts import _read_env

HEAD = '''class Lib:
    def __init__(self, init_config=None):
        self.books = {}
        self.count = 0

    def get_book(self, book_id: str) -> dict:
        if book_id == "never":
            self._h0()
        return {"success": True, "data": self.books.get(book_id)}
'''


def _fan_out(helpers: int) -> str:
    """Each `_h{i}` calls `_h{i+1}` and `_h{i+2}`: fib(helpers) call paths reach the last two, which write."""
    body = [HEAD]
    for i in range(helpers):
        calls = [f"        self._h{j}()" for j in (i + 1, i + 2) if j < helpers] or ["        self.count += 1"]
        body.append(f"    def _h{i}(self):\n" + "\n".join(calls) + "\n")
    return "\n".join(body)


def _chain(helpers: int) -> str:
    body = [HEAD] + [f"    def _h{i}(self):\n        self._h{i + 1}()\n" for i in range(helpers - 1)]
    body.append(f"    def _h{helpers - 1}(self):\n        self.count += 1\n")
    return "\n".join(body)


def _wide(tools: int, attrs: int) -> str:
    """`tools` tools, each through one helper writing `attrs` attributes: tools x attrs folded facts."""
    body = [HEAD] + [f"    def t{i}(self) -> dict:\n        self._set_all()\n        return {{'success': True}}\n"
                     for i in range(tools)]
    body.append("    def _set_all(self):\n" + "\n".join(f"        self.a{j} = 1" for j in range(attrs)) + "\n")
    return "\n".join(body)


def test_helpers_that_each_call_the_next_two_give_one_write_per_attribute() -> None:
    writes = ClassEffects(_fan_out(22), "Lib").writes("get_book")
    assert [w.attr for w in writes] == ["count"], f"{len(writes)} writes recorded (one per call path)"
    assert writes[0].how.startswith("calls _h0(), which calls _h1()") and writes[0].how.endswith("self.count")


def test_sixty_fanned_out_helpers_are_read_in_linear_memory() -> None:
    """The checker's class: before, it grew 1.6x per helper (13 GB and rising at 60)."""
    writes = ClassEffects(_fan_out(60), "Lib").writes("get_book")
    assert [w.attr for w in writes] == ["count"]
    assert len(writes[0].how) <= 210, "how a deep chain writes is cut in the middle, not grown per hop"


def test_a_chain_of_thousands_of_helpers_is_read_without_recursion() -> None:
    writes = ClassEffects(_chain(4000), "Lib").writes("get_book")
    assert [w.attr for w in writes] == ["count"]
    assert writes[0].how.endswith("which assigns self.count")


def test_a_class_whose_folded_effects_pass_the_limit_is_refused_naming_it() -> None:
    try:
        ClassEffects(_wide(300, 1000), "Lib")
    except AnalysisTooLarge as exc:
        assert f"{MAX_FOLDED_FACTS:,}" in str(exc) and "MAX_FOLDED_FACTS" in str(exc)
    else:
        raise AssertionError("300 tools x 1000 attributes were analysed (300,000 facts)")


def test_an_imported_env_too_intricate_to_analyse_is_rejected_with_that_reason(tmp_path: Path,
                                                                               sandbox_pool: Any) -> None:
    env = _read_env(tmp_path, "Lib", _wide(300, 1000), {"get_book": ("query", {"book_id": "string"})})
    outcome = judge_env(env, None, None, sandbox_pool, settings_for(tmp_path), [], on_empty=True)
    assert not outcome.accepted
    assert any("refuses to analyse" in r and "MAX_FOLDED_FACTS" in r for r in outcome.reasons), outcome.reasons
