"""Spec: in `llm` and `both` modes, through the real mock LLM over HTTP and the real sandbox, a class no
spec labels gets the LLM's reading of its tools on top of the heuristics, planted defects are rejected
for their own reason, and every state-changing tool's code runs (the LLM pass's misses are topped up by
the programmatic search, so `llm` mode cannot accept code that never ran)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from envscaler_core.config import Settings
from envscaler_core.llm import LLMGateway
from envscaler_core.models import EnvCandidate
from envscaler_core.synth import extract_tools
from envscaler_core.validation import validate_candidate
from tests.validation.outside_classes import SUBJECTS, Subject

BY_NAME = {s.name: s for s in SUBJECTS}


def run(subject: Subject, code: str, mode: str, llm_settings: Settings, runtime: Any, chains: int = 3) -> Any:
    cand = EnvCandidate(topic_fp="t", class_name=subject.class_name, class_code=code,
                        tools=extract_tools(code, subject.class_name))
    settings = Settings.model_validate({"validate": {"mode": mode, "rounds": 12, "chains": chains}})
    return asyncio.run(validate_candidate(cand, runtime, LLMGateway(llm_settings.llm), settings,
                                          test_state=subject.state))


@pytest.mark.parametrize("mode", ["llm", "both"])
def test_without_a_spec_the_llm_labels_the_tools_too(mode: str, llm_settings: Settings, runtime: Any,
                                                     mock_stats_reset: Any) -> None:
    hotel = BY_NAME["hotel"]
    out = run(hotel, hotel.code, mode, llm_settings, runtime)
    assert out.report.accepted, (out.report.critical, out.report.blocking, out.report.reasons)
    assert {n: label.kind for n, label in out.report.tool_kinds.items()} == hotel.kinds
    assert all("LLM: " in label.evidence for label in out.report.tool_kinds.values())  # consulted on each
    # the mock reads check_in_guest as a 'check' (a query); the clear name and the code's writes outvote it
    check_in = out.report.tool_kinds["check_in_guest"]
    assert check_in.kind == "state_change" and "LLM: query" in check_in.evidence
    assert "llm" in out.report.tool_kinds["get_room_details"].source
    assert mock_stats_reset.stats()["by_prompt"].get("validate.tool_kinds") == 1


def test_a_spec_that_labels_every_tool_costs_no_labelling_call(llm_settings: Settings, runtime: Any,
                                                              mock_stats_reset: Any) -> None:
    hotel = BY_NAME["hotel"]
    cand = EnvCandidate(topic_fp="t", class_name=hotel.class_name, class_code=hotel.code,
                        tools=extract_tools(hotel.code, hotel.class_name), tool_kinds=hotel.kinds)
    settings = Settings.model_validate({"validate": {"mode": "both", "rounds": 4}})
    out = asyncio.run(validate_candidate(cand, runtime, LLMGateway(llm_settings.llm), settings, test_state=hotel.state))
    assert {label.source for label in out.report.tool_kinds.values()} == {"spec"}
    assert "validate.tool_kinds" not in mock_stats_reset.stats()["by_prompt"]


BOTH_CASES = [("hotel", "mutates_on_failure"), ("hotel", "query_mutates"), ("hotel", "stores_set"),
              ("hotel", "raises_on_missing"), ("hotel", "non_dict_return"), ("bank", "query_mutates"),
              ("tickets", "mutates_on_failure"), ("campus", "query_mutates")]


@pytest.mark.parametrize("chains", [1, 3])
@pytest.mark.parametrize(("name", "defect"), BOTH_CASES, ids=[f"{n}-{d}" for n, d in BOTH_CASES])
def test_both_mode_rejects_each_planted_defect_for_its_reason(name: str, defect: str, chains: int,
                                                             llm_settings: Settings, runtime: Any) -> None:
    subject = BY_NAME[name]
    out = run(subject, subject.with_defect(defect), "both", llm_settings, runtime, chains)
    evidence = out.report.critical + out.report.blocking
    assert not out.report.accepted and any(subject.defects[defect].expect in line for line in evidence), evidence


LLM_CASES = [("hotel", "query_mutates"), ("campus", "query_mutates"), ("hotel", "raises_on_missing"),
             ("hotel", "non_dict_return")]


@pytest.mark.parametrize("chains", [1, 3])
@pytest.mark.parametrize(("name", "defect"), LLM_CASES, ids=[f"{n}-{d}" for n, d in LLM_CASES])
def test_llm_mode_rejects_what_its_rounds_expose(name: str, defect: str, chains: int, llm_settings: Settings,
                                                 runtime: Any) -> None:
    subject = BY_NAME[name]
    out = run(subject, subject.with_defect(defect), "llm", llm_settings, runtime, chains)
    assert not out.report.accepted
    expect = subject.defects[defect].expect
    assert any(expect in line for line in out.report.critical), out.report.critical


def test_llm_mode_tops_up_what_the_proposer_never_got_to_succeed(llm_settings: Settings, runtime: Any) -> None:
    """The mock's proposer (one chain) picks a new_slot of any doctor; the appointment's own doctor's slot
    is found by the programmatic search, so rescheduling's code runs before anything is accepted."""
    from mock_llm import library

    domain = next(d for d in library.domains() if d.name == "clinic_appointments")
    subject = Subject(name=domain.name, style="user", class_name=domain.class_name, code=domain.class_source,
                      state=domain.initial_states[0], kinds=dict(domain.tool_kinds))
    out = run(subject, subject.code, "llm", llm_settings, runtime, chains=1)
    assert out.report.accepted and not out.report.unreached
    top_up = [r for r in out.rounds if r.mode == "programmatic"]
    assert top_up and {r.tool for r in top_up} == {"reschedule_appointment"}
    assert any(r.observation.get("success") is True for r in top_up)
