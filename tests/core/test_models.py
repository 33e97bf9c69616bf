"""Every pipeline record survives a JSON round trip unchanged, and fingerprints mean content."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from envscaler_core.models import (
    AcceptedEnv, CheckResult, CheckSpec, EnvCandidate, EnvSpec, EnvTopic, Entity, LLMCall, Operation, Run,
    Scenario, SourceTask, ToolCall, ToolFunction, ToolSchema, Trajectory, ValidationReport, ValidationRound,
)

TOOL = ToolSchema(function=ToolFunction(name="get_item", description="Get one item.", parameters={
    "type": "object", "properties": {"item_id": {"type": "string"}}, "required": ["item_id"]}))

SAMPLES = [
    SourceTask(text="Cancel my dentist appointment.", dataset="api-bank", origin="lv3.json:#4", stateful=True),
    EnvTopic(summary="Clinic scheduler", introduction="Keeps appointments.", usefulness=8, modelability=9,
             example_task="Book a slot.", source_task_fp="ab", embedding=[0.1, 0.2]),
    EnvSpec(topic_fp="t", summary="s", introduction="i",
            entities=[Entity(name="Item", attributes=["item_id", "name"])],
            rules=["ids are unique"], operations=[Operation(name="get_item", description="d", kind="query")]),
    EnvCandidate(topic_fp="t", class_name="Shop", class_code="class Shop:\n    pass\n", tools=[TOOL],
                 tool_kinds={"get_item": "query"}),
    AcceptedEnv(env_id="env_1", candidate_fp="c", summary="s", introduction="i", class_name="Shop",
                class_code="class Shop: ...", tools=[TOOL], score=0.9, validation_mode="both"),
    ValidationRound(candidate_fp="c", mode="programmatic", index=0, tool="get_item", args={"item_id": "x"},
                    case_type="negative", observation={"success": False, "error": "no item"},
                    verdict="pass", reason="ok", state_diff={}),
    ValidationReport(accepted=True, score=0.9, threshold=0.85, mode="both", rounds=30, passes=27, fails=3),
    Scenario(env_id="env_1", initial_state={"items": {}}, task="Add an item.", checklist=["Has item x?"],
             checks=[CheckSpec(item="Has item x?", code="def check_func(final_state):\n    return True\n")],
             reference_solution=[ToolCall(tool="add_item", args={"item_id": "x"})]),
    Trajectory(scenario_fp="s", env_id="env_1", mode="non_conversational", agent_model="m",
               messages=[{"role": "user", "content": "hi"}], tools=[TOOL], termination="agent_done",
               check_results=[CheckResult(item="Has item x?", passed=None, error="boom")], reward=0.0,
               all_passed=False),
    Run(run_id="run-1", config={"a": 1}),
    LLMCall(fingerprint="f", stage="mine", model="m", status="ok", response={"role": "assistant"}),
]


@pytest.mark.parametrize("record", SAMPLES, ids=lambda r: type(r).__name__)
def test_json_round_trip_is_lossless(record):
    again = type(record).model_validate_json(record.model_dump_json())
    assert again == record


def test_fingerprint_ignores_bookkeeping_fields():
    a = SourceTask(text="Book a room.", dataset="api-bank", origin="f:#1")
    b = SourceTask(text="Book a room.", dataset="bfcl", origin="g:#9", stateful=False)
    assert a.fingerprint == b.fingerprint


def test_fingerprint_changes_with_content():
    assert SourceTask(text="a", dataset="d", origin="o").fingerprint != SourceTask(
        text="b", dataset="d", origin="o").fingerprint


def test_unknown_fields_are_rejected():
    with pytest.raises(ValidationError, match="extra"):
        SourceTask(text="a", dataset="d", origin="o", surprise=1)


def test_topic_scores_are_bounded():
    with pytest.raises(ValidationError, match="usefulness"):
        EnvTopic(summary="s", introduction="i", usefulness=11, modelability=5, example_task="t",
                 source_task_fp="x")


@pytest.mark.parametrize("run_id", [".", "..", "../x", ".hidden", "-rf", "a b", "a/b", "é", "", "x" * 129, "a\nb"])
def test_a_run_id_that_cannot_name_a_directory_is_refused(run_id: str) -> None:
    from envscaler_core.models import Run
    from envscaler_core.models.run import run_id_problem

    assert "is not usable" in (run_id_problem(run_id) or "")
    with pytest.raises(ValidationError):
        Run(run_id=run_id)


@pytest.mark.parametrize("run_id", ["run-20261123-101010-ab12", "my.run_2", "_x", "7", "x" * 128])
def test_usual_run_ids_are_accepted(run_id: str) -> None:
    from envscaler_core.models.run import run_id_problem

    assert run_id_problem(run_id) is None
