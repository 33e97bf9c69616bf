"""Spec (issue 14): in `both` mode the free programmatic pass gates the paid LLM pass. A candidate it
rejects on a contract fact costs no LLM validation call (no labelling, no proposer, no judge) and its
verdict says why; a breach that depends on who labelled a tool (a "query" that changed state) waits for
the LLM's labels first; a candidate the free pass does not reject gets every LLM round. Real mock LLM
over HTTP, real sandbox; the mock's per-prompt request counts are the evidence."""

from __future__ import annotations

import asyncio
from typing import Any

from envscaler_core.config import Settings
from envscaler_core.llm import LLMGateway
from envscaler_core.models import EnvCandidate
from envscaler_core.synth import extract_tools
from envscaler_core.validation import validate_candidate
from tests.validation.outside_classes import SUBJECTS

HOTEL = next(s for s in SUBJECTS if s.name == "hotel")
LLM_PROMPTS = ("validate.tool_kinds", "validate.propose_call", "validate.judge_call")


def validate(code: str, llm_settings: Settings, runtime: Any, *, labelled: bool, rounds: int = 6) -> tuple[Any, LLMGateway]:
    cand = EnvCandidate(topic_fp="t", class_name=HOTEL.class_name, class_code=code,
                        tools=extract_tools(code, HOTEL.class_name), tool_kinds=HOTEL.kinds if labelled else {})
    gateway = LLMGateway(llm_settings.llm)
    settings = Settings.model_validate({"validate": {"mode": "both", "rounds": rounds, "chains": 2}})
    return asyncio.run(validate_candidate(cand, runtime, gateway, settings, test_state=HOTEL.state)), gateway


def llm_requests(mock: Any) -> dict[str, int]:
    by_prompt = mock.stats()["by_prompt"]
    return {p: by_prompt.get(p, 0) for p in LLM_PROMPTS}


def test_a_contract_breach_found_for_free_costs_no_llm_validation_call(llm_settings: Settings, runtime: Any,
                                                                        mock_stats_reset: Any) -> None:
    out, gateway = validate(HOTEL.with_defect("raises_on_missing"), llm_settings, runtime, labelled=False)
    assert not out.report.accepted and out.report.critical
    assert llm_requests(mock_stats_reset) == dict.fromkeys(LLM_PROMPTS, 0)
    assert not any(stage.startswith("validate_") and u["calls"] for stage, u in gateway.usage_by_stage().items())
    assert out.report.llm_pass_skipped and "no LLM validation tokens" in out.report.llm_pass_skipped
    assert out.report.reasons[0] == out.report.llm_pass_skipped
    assert {r.mode for r in out.rounds} == {"programmatic"}


def test_a_breach_that_depends_on_a_label_waits_for_the_llms_labels(llm_settings: Settings, runtime: Any,
                                                                     mock_stats_reset: Any) -> None:
    out, _ = validate(HOTEL.with_defect("query_mutates"), llm_settings, runtime, labelled=False)
    assert not out.report.accepted
    assert llm_requests(mock_stats_reset) == {"validate.tool_kinds": 1, "validate.propose_call": 0,
                                              "validate.judge_call": 0}
    assert out.report.llm_pass_skipped and any("changed state" in c for c in out.report.critical)


def test_with_spec_labels_a_query_that_changes_state_is_gated_without_any_llm_call(
        llm_settings: Settings, runtime: Any, mock_stats_reset: Any) -> None:
    out, _ = validate(HOTEL.with_defect("query_mutates"), llm_settings, runtime, labelled=True)
    assert not out.report.accepted and out.report.llm_pass_skipped
    assert llm_requests(mock_stats_reset) == dict.fromkeys(LLM_PROMPTS, 0)


def test_a_candidate_the_free_pass_does_not_reject_gets_every_llm_round(llm_settings: Settings, runtime: Any,
                                                                        mock_stats_reset: Any) -> None:
    out, _ = validate(HOTEL.code, llm_settings, runtime, labelled=True, rounds=6)
    assert out.report.accepted and out.report.llm_pass_skipped is None
    requests = llm_requests(mock_stats_reset)
    assert requests["validate.propose_call"] == 6 and requests["validate.judge_call"] == 6
    assert sum(r.mode == "llm" for r in out.rounds) == 6
