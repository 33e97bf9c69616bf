"""Spec: code past pyast.MAX_SOURCE_CHARS is refused before it is parsed, with a reason naming the
limit (sandbox red team round 5, F3: a 4 MB class took 2 GB and a minute to parse, holding the
process-wide AST lock; a 30 MB one was accepted and shipped into every episode)."""

from __future__ import annotations

import time

import pytest

from envscaler_core import pyast
from envscaler_core.synth.static_checks import static_problems

SMALL = "class Lib:\n    def get(self) -> dict:\n        return {'success': True, 'data': 1}\n"


def _padded(chars: int) -> str:
    return SMALL + "# " + "x" * (chars - len(SMALL) - 3) + "\n"


def test_parsing_code_past_the_limit_is_refused_naming_it() -> None:
    with pytest.raises(pyast.SourceTooLarge) as refused:
        pyast.parse(_padded(pyast.MAX_SOURCE_CHARS + 1))
    assert f"{pyast.MAX_SOURCE_CHARS + 1:,} characters" in str(refused.value.msg)
    assert "MAX_SOURCE_CHARS" in str(refused.value.msg)


def test_the_refusal_comes_before_any_parsing() -> None:
    started = time.monotonic()
    with pytest.raises(pyast.SourceTooLarge):
        pyast.parse("[" + "1," * 2_000_000 + "]")  # 4 MB of list literal: a minute and 2 GB when parsed
    assert time.monotonic() - started < 1.0


def test_code_at_the_limit_still_parses() -> None:
    assert pyast.parse(_padded(pyast.MAX_SOURCE_CHARS)).body


def test_the_factory_static_checks_reject_code_past_the_limit() -> None:
    [problem] = static_problems(_padded(pyast.MAX_SOURCE_CHARS + 1), "Lib")
    assert problem.name == "code-too-large" and "MAX_SOURCE_CHARS" in problem.detail
