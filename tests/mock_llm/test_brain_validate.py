"""Spec: the validation roles. The proposer is a deterministic exploration policy; the judge decides
from the facts in its payload alone, and those facts (produced by running the defective variants in
the real sandbox) are enough for it to reject every planted defect."""

from __future__ import annotations

from typing import Any

import pytest

from mock_llm import library
from envscaler_core.prompts import validate as PV
from envscaler_core.models.changes import state_changes
from envscaler_core.synth import extract_tools
from envscaler_core.validation.code_slices import CodeSlices
from tests.mock_llm.helpers import ask, open_env

CLINIC = library.by_name("clinic_appointments")
LOANS = library.by_name("equipment_loans")
WAITLIST = library.by_name("surgery_waitlist")


def _propose(domain: library.Domain, stats: dict[str, PV.ToolStats], state: dict[str, Any] | None = None,
             round_: int = 1) -> PV.ProposedCall:
    schemas = [t.function.model_dump(mode="json", exclude_none=True)
               for t in extract_tools(domain.class_source, domain.class_name)]
    initial = domain.initial_states[0]
    return ask(PV.PROPOSE_CALL, PV.ProposeInput(introduction=domain.introduction, tool_schemas=schemas, stats=stats,
                                                initial_state=initial, changes=state_changes(initial, state or initial),
                                                round=round_, rounds=30))


def test_proposer_starts_with_a_positive_case_of_the_first_tool():
    call = _propose(CLINIC, {})
    assert (call.tool, call.case_type) == ("list_doctors", "positive")


def test_proposer_prefers_the_least_tested_tool():
    stats = {name: PV.ToolStats(total=1, positive=1) for name in CLINIC.tool_kinds}
    stats["cancel_appointment"] = PV.ToolStats()
    assert _propose(CLINIC, stats).tool == "cancel_appointment"


def test_proposer_balances_a_tested_positive_with_a_negative_case():
    stats = {name: PV.ToolStats(total=1, positive=1) for name in CLINIC.tool_kinds}
    assert _propose(CLINIC, stats).case_type == "negative"


def test_positive_case_takes_ids_from_the_state():
    stats = {name: PV.ToolStats(total=1, positive=1, negative=1) for name in CLINIC.tool_kinds}
    stats["get_patient"] = PV.ToolStats()
    call = _propose(CLINIC, stats)
    assert call.args["patient_id"] in CLINIC.initial_states[0]["patients"]


def test_negative_case_uses_a_nonexistent_id():
    stats = {name: PV.ToolStats(total=2, positive=1, negative=1) for name in CLINIC.tool_kinds}
    stats["cancel_appointment"] = PV.ToolStats(total=1, positive=1)
    call = _propose(CLINIC, stats, round_=7)
    assert call.case_type == "negative"
    assert call.args["appointment_id"] not in CLINIC.initial_states[0]["appointments"]


def _judge(request: pytest.FixtureRequest, domain: library.Domain, tool: str, args: dict[str, Any],
           case_type: str, state: dict[str, Any] | None = None) -> PV.JudgeOutput:
    before = state or domain.initial_states[0]
    env = open_env(request, domain, before)
    try:
        observation, after = env.call(tool, args)
    finally:
        env.close()
    initial = domain.initial_states[0]
    code = CodeSlices(domain.class_source, domain.class_name)
    return ask(PV.JUDGE_CALL, PV.JudgeInput(
        introduction=domain.introduction, rules=domain.rules, class_context=code.shared, initial_state=initial,
        tool=tool, tool_kind=domain.tool_kinds[tool], tool_code=code.tool(tool), args=args, case_type=case_type, observation=observation,
        changes_before=state_changes(initial, before), call_changes=state_changes(before, after)))


def test_judge_fails_a_tool_that_raises_on_an_unknown_id(request):
    out = _judge(request, LOANS, "return_item", {"loan_id": "L-404"}, "negative")
    assert out.verdict == "fail" and "exception" in out.reason


def test_judge_fails_a_query_that_changes_state(request):
    out = _judge(request, LOANS, "get_item", {"item_id": "EQ-1"}, "positive")
    assert out.verdict == "fail" and "query" in out.reason


def test_judge_fails_a_failed_call_that_half_applied_its_change(request):
    args = {"patient_id": "SP-1", "hospital_id": "H-2", "procedure": "knee replacement", "priority": 3}  # H-2 is full
    out = _judge(request, WAITLIST, "register_patient", args, "positive")
    assert out.verdict == "fail" and "failed" in out.reason and "changed the state" in out.reason


def test_judge_fails_a_non_dict_return(request):
    out = _judge(request, WAITLIST, "update_priority", {"entry_id": "W-404", "priority": 2}, "negative")
    assert out.verdict == "fail" and "non-dict" in out.reason


def test_judge_passes_a_correct_state_change(request):
    out = _judge(request, CLINIC, "cancel_appointment", {"appointment_id": "A-002"}, "positive")
    assert (out.verdict, out.reason) == ("pass", "ok")


def test_judge_passes_a_clean_rejection_of_a_negative_case(request):
    out = _judge(request, CLINIC, "cancel_appointment", {"appointment_id": "A-404"}, "negative")
    assert out.verdict == "pass"


def test_judge_warns_when_a_positive_case_is_refused(request):
    out = _judge(request, CLINIC, "cancel_appointment", {"appointment_id": "A-003"}, "positive")  # completed
    assert out.verdict == "warning" and "A-003" in out.reason
