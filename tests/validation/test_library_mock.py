"""Spec (issue 4 acceptance): over the real mock LLM (HTTP, real openai client) and the real sandbox,
every healthy library domain is accepted and every defective variant rejected for the defect it was
built to show, in each validation mode."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from envscaler_core.config import Settings
from envscaler_core.llm import LLMGateway
from mock_llm import library
from envscaler_core.models import EnvCandidate, EnvSpec
from envscaler_core.models.spec import Entity
from envscaler_core.synth import extract_tools

DOMAINS = library.domains()
# what each defect must be rejected for, as contract facts observed in the sandbox
EXPECTED = {
    "equipment_loans": ("changed state", "KeyError"),
    "surgery_waitlist": ("reported failure but changed state", "not a dict"),
}


def candidate(domain: Any) -> tuple[EnvCandidate, EnvSpec]:
    spec = EnvSpec(topic_fp="t", summary=domain.summary, introduction=domain.introduction,
                   entities=[Entity(name="x", attributes=["y"])], rules=list(domain.rules))
    cand = EnvCandidate(topic_fp="t", spec_fp=spec.fingerprint, class_name=domain.class_name,
                        class_code=domain.class_source, tools=extract_tools(domain.class_source, domain.class_name),
                        tool_kinds=dict(domain.tool_kinds), variant=domain.defect)
    return cand, spec


def run(domain: Any, mode: str, runtime: Any, llm_settings: Settings, chains: int = 3) -> Any:
    from envscaler_core.validation import validate_candidate

    cand, spec = candidate(domain)
    settings = Settings.model_validate({"validate": {"mode": mode, "rounds": 30, "chains": chains}})
    gateway = LLMGateway(llm_settings.llm)
    return asyncio.run(validate_candidate(cand, runtime, gateway, settings, spec=spec))


@pytest.mark.parametrize("mode", ["programmatic", "llm", "both"])
@pytest.mark.parametrize("domain", [d for d in DOMAINS if d.defect is None], ids=lambda d: d.name)
def test_healthy_domain_is_accepted(domain: Any, mode: str, runtime: Any, llm_settings: Settings) -> None:
    out = run(domain, mode, runtime, llm_settings)
    assert out.report.accepted, (out.report.score, out.report.critical, out.report.reasons[:3])
    assert out.env is not None and out.report.rounds >= 10


@pytest.mark.parametrize(("mode", "chains"), [("programmatic", 1), ("llm", 1), ("llm", 3), ("both", 1), ("both", 3)])
@pytest.mark.parametrize("domain", [d for d in DOMAINS if d.defect is not None], ids=lambda d: d.name)
def test_defective_domain_is_rejected_for_its_defect(domain: Any, mode: str, chains: int, runtime: Any,
                                                     llm_settings: Settings) -> None:
    out = run(domain, mode, runtime, llm_settings, chains)
    assert not out.report.accepted
    evidence = " | ".join(out.report.critical + out.report.reasons)
    missing = [marker for marker in EXPECTED[domain.name] if marker not in evidence]
    assert not missing, f"defect(s) not caught: {missing}; evidence: {evidence}"
    assert out.report.critical, "a defective env must be vetoed by contract facts, not only by its score"
