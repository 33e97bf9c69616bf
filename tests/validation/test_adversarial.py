"""Spec: the adversarial classes (tests/validation/adversarial_classes.py) get the verdict they deserve
through the real sandbox, with no spec: correct ones accepted with every tool reached, defective ones
rejected for their own reason."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from envscaler_core.config import SandboxSettings, Settings
from envscaler_core.models import EnvCandidate
from envscaler_core.synth import extract_tools
from envscaler_core.validation import validate_candidate
from tests.validation.adversarial_classes import CASES

PROGRAMMATIC = Settings.model_validate({"validate": {"mode": "programmatic"}})


@pytest.fixture(scope="module")
def quick_pool() -> Iterator[Any]:
    from sandbox import SandboxPool

    with SandboxPool(SandboxSettings(call_timeout_s=0.5)) as pool:
        yield pool


def env_class(code: str) -> str:
    import ast

    return [n.name for n in ast.parse(code).body if isinstance(n, ast.ClassDef) and not n.bases][-1]


@pytest.mark.parametrize(("name", "accept", "expect", "code", "state"), CASES, ids=[c[0] for c in CASES])
def test_the_verdict_is_the_deserved_one(name: str, accept: bool, expect: str, code: str, state: dict[str, Any],
                                         quick_pool: Any) -> None:
    cls = env_class(code)
    cand = EnvCandidate(topic_fp="t", class_name=cls, class_code=code, tools=extract_tools(code, cls))
    out = asyncio.run(validate_candidate(cand, quick_pool, None, PROGRAMMATIC, test_state=state))
    evidence = out.report.critical + out.report.blocking
    if accept:
        assert out.report.accepted and not out.report.unreached, (evidence, out.report.reasons)
    else:
        assert not out.report.accepted and any(expect in line for line in evidence), evidence
