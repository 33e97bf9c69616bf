"""Spec: classes written by others (EnvScaler's generator style; users' self-loading styles with
dataclass records, lists of records with an id field, nested dicts) are accepted when correct and
rejected for the planted defect's own reason, with and without a spec labelling the tools, through
the real sandbox. Without a spec the inferred labels match what the tools are."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from envscaler_core.config import SandboxSettings, Settings
from envscaler_core.models import EnvCandidate
from envscaler_core.synth import extract_tools
from envscaler_core.validation import validate_candidate
from tests.validation.outside_classes import SUBJECTS, Subject

PROGRAMMATIC = Settings.model_validate({"validate": {"mode": "programmatic"}})
CASES = [(s, d) for s in SUBJECTS for d in s.defects]


@pytest.fixture(scope="module")
def fast_pool() -> Iterator[Any]:
    """A pool whose calls time out after half a second: the hanging defect costs little."""
    from sandbox import SandboxPool

    with SandboxPool(SandboxSettings(call_timeout_s=0.5)) as pool:
        yield pool


def validate(subject: Subject, code: str, runtime: Any, spec: bool) -> Any:
    cand = EnvCandidate(topic_fp="t", class_name=subject.class_name, class_code=code,
                        tools=extract_tools(code, subject.class_name), tool_kinds=subject.kinds if spec else {})
    return asyncio.run(validate_candidate(cand, runtime, None, PROGRAMMATIC, test_state=subject.state))


@pytest.mark.parametrize("subject", SUBJECTS, ids=lambda s: f"{s.style}-{s.name}")
def test_a_correct_class_is_accepted_with_every_tool_reached_and_labelled_right(subject: Subject, runtime: Any) -> None:
    out = validate(subject, subject.code, runtime, spec=False)
    assert out.report.accepted, (out.report.critical, out.report.blocking, out.report.reasons)
    assert out.report.unreached == []
    assert {name: label.kind for name, label in out.report.tool_kinds.items()} == subject.kinds
    assert all(label.source != "spec" for label in out.report.tool_kinds.values())


@pytest.mark.parametrize("spec", [False, True], ids=["no-spec", "spec"])
@pytest.mark.parametrize(("subject", "defect"), CASES, ids=[f"{s.style}-{s.name}-{d}" for s, d in CASES])
def test_a_planted_defect_is_rejected_for_its_own_reason(subject: Subject, defect: str, spec: bool,
                                                         fast_pool: Any) -> None:
    out = validate(subject, subject.with_defect(defect), fast_pool, spec)
    assert not out.report.accepted
    evidence = out.report.critical + out.report.blocking
    assert any(subject.defects[defect].expect in line for line in evidence), evidence


def test_the_hanging_tool_costs_one_timeout_not_one_per_candidate(fast_pool: Any) -> None:
    hotel = next(s for s in SUBJECTS if s.name == "hotel")
    out = validate(hotel, hotel.with_defect("hangs"), fast_pool, spec=False)
    assert [r.tool for r in out.rounds].count("get_room_details") == 1
