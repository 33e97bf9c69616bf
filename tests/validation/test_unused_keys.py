"""Spec: when a state-changing tool never succeeded and the test state holds keys the class never uses
(a renamed key: `catalog` where the class reads `books`), the rejection names those keys and the
class's own attributes, so the reader sees the state is wrong rather than hunting a bug in the tool."""

from __future__ import annotations

import asyncio

from envscaler_core.config import Settings
from envscaler_core.models import EnvCandidate
from envscaler_core.synth import extract_tools
from envscaler_core.validation import validate_candidate
from tests.scenarios.helpers import LIBRARY_CODE, STATE

SETTINGS = Settings.model_validate({"validate": {"mode": "programmatic"}})
RENAMED = {"catalog": STATE["books"], "loans": STATE["loans"]}


def validate(state: dict, runtime):
    candidate = EnvCandidate(topic_fp="t", class_name="Library", class_code=LIBRARY_CODE,
                             tools=extract_tools(LIBRARY_CODE, "Library"))
    return asyncio.run(validate_candidate(candidate, runtime, None, SETTINGS, test_state=state)).report


def test_a_never_succeeded_rejection_names_the_state_keys_the_class_never_uses(runtime) -> None:
    report = validate(RENAMED, runtime)
    assert not report.accepted
    [blocking] = report.blocking
    assert "lend_book never succeeded" in blocking
    assert "the state's key(s) catalog are never used by Library (its own attributes: books, loans)" in blocking


def test_keys_the_class_does_use_are_never_named(runtime) -> None:
    report = validate({**STATE, "books": {}}, runtime)
    assert not report.accepted and not any("never used" in r for r in [*report.blocking, *report.reasons])
