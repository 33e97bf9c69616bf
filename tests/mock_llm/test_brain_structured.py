"""Spec: every structured prompt, rendered for real and read back as the server reads it, gets one
JSON object valid for its output model, for every library domain; and Stage 2's answers assemble
into the library's own class."""

from __future__ import annotations

import ast
from typing import Any

import pytest

from mock_llm import library
from mock_llm.library import code as libcode
from envscaler_core.models.spec import Operation
from envscaler_core.prompts import STRUCTURED_PROMPTS
from envscaler_core.prompts import mine as PM
from envscaler_core.prompts import scen as PS
from envscaler_core.prompts import synth as PY
from envscaler_core.prompts import validate as PV
from envscaler_core.synth import assemble_module, extract_tools, parse_method, static_problems, state_attributes
from envscaler_core.synth.tool_schema import tool_lines
from envscaler_core.validation.code_slices import CodeSlices
from tests.mock_llm.helpers import ask

DOMAINS = library.domains()
IDS = [d.name for d in DOMAINS]


def inputs_for(domain: library.Domain) -> dict[str, Any]:
    """One valid input per structured prompt id, chained through the brain's own earlier answers."""
    sc = domain.scenarios[0]
    task = PM.TaskInput(task=sc.task)
    topic = ask(PM.INFER_TOPIC, task)
    topic_in = PY.TopicInput(summary=topic.summary, introduction=topic.introduction, example_task=sc.task)
    space = ask(PY.STATE_SPACE, topic_in)
    skel_in = PY.SkeletonInput(summary=topic.summary, introduction=topic.introduction, entities=space.entities,
                               rules=space.rules)
    skel = ask(PY.CLASS_SKELETON, skel_in)
    ops_in = PY.OperationsInput(summary=topic.summary, introduction=topic.introduction, entities=space.entities,
                                rules=space.rules, skeleton_code=skel.code, example_task=sc.task)
    ops = ask(PY.OPERATIONS, ops_in).operations
    code, name = domain.class_source, domain.class_name
    tools = extract_tools(code, name)
    state_in = PV.StateInput(introduction=domain.introduction, class_name=name, class_code=code,
                             state_attributes=state_attributes(code, name))
    first = tools[0].function.name
    batch = PM.TaskBatchInput(tasks=[PM.NumberedTask(id=i + 1, task=s.task) for i, s in enumerate(domain.scenarios)])
    return {
        "mine.judge_stateful": task, "mine.infer_topic": task,
        "mine.judge_stateful_batch": batch, "mine.infer_topic_batch": batch,
        "synth.state_space": topic_in, "synth.class_skeleton": skel_in, "synth.operations": ops_in,
        "synth.method": PY.MethodInput(summary=topic.summary, introduction=topic.introduction, entities=space.entities,
                                       rules=space.rules, skeleton_code=skel.code,
                                       operation_names=[o.name for o in ops], target=ops[0]),
        "validate.test_state": state_in,
        "validate.tool_kinds": PV.ToolKindsInput(introduction=domain.introduction, class_header="", tools=[
            PV.ToolToLabel(name=t.function.name, description=t.function.description, source="") for t in tools]),
        "validate.propose_call": PV.ProposeInput(introduction=domain.introduction, stats={},
                                                 tool_schemas=[t.function.model_dump(mode="json", exclude_none=True)
                                                               for t in tools],
                                                 initial_state=sc.initial_state, round=1, rounds=10),
        "validate.judge_call": PV.JudgeInput(introduction=domain.introduction, rules=domain.rules,
                                             class_context=CodeSlices(code, name).shared,
                                             initial_state=sc.initial_state,
                                             tool=first, tool_kind=domain.tool_kinds[first],
                                             args={}, case_type="positive", observation={"success": True, "data": []}),
        "scen.initial_state": state_in,
        "scen.task": PS.TaskInput(env_id="env_x", introduction=domain.introduction, rules=domain.rules,
                                  operations=[Operation(**o) for o in libcode.operations(domain)],
                                  initial_state=sc.initial_state),
        "scen.checklist": PS.ChecklistInput(task=sc.task),
        "scen.check_function": PS.CheckFunctionInput(introduction=domain.introduction, initial_state=sc.initial_state,
                                                     task=sc.task, item=sc.checklist[0]),
        "scen.check_functions": PS.CheckFunctionsInput(
            introduction=domain.introduction, initial_state=sc.initial_state, task=sc.task,
            items=[PS.NumberedItem(id=i + 1, item=it) for i, it in enumerate(sc.checklist)]),
        "scen.reference_solution": PS.SolutionInput(introduction=domain.introduction, tools=_lines(domain),
                                                    initial_state=sc.initial_state, task=sc.task,
                                                    checklist=sc.checklist),
    }


def _lines(domain: library.Domain) -> list[str]:
    return tool_lines(extract_tools(domain.class_source, domain.class_name))


CASES = [(d, pid) for d in DOMAINS for pid in STRUCTURED_PROMPTS]


@pytest.mark.parametrize(("domain", "prompt_id"), CASES, ids=[f"{d.name}-{p}" for d, p in CASES])
def test_structured_prompt_gets_a_valid_answer(domain, prompt_id):
    spec = STRUCTURED_PROMPTS[prompt_id]
    out = ask(spec, inputs_for(domain)[prompt_id])  # ask() validates against spec.output_model
    assert isinstance(out, spec.output_model)


@pytest.mark.parametrize("domain", DOMAINS, ids=IDS)
def test_synth_answers_assemble_into_the_library_class(domain):
    inputs = inputs_for(domain)
    skel = ask(PY.CLASS_SKELETON, inputs["synth.class_skeleton"])
    ops = ask(PY.OPERATIONS, inputs["synth.operations"]).operations
    pieces = []
    for op in ops:
        method_in = inputs["synth.method"].model_copy(update={"target": op})
        pieces.append(parse_method(ask(PY.METHOD, method_in).code, op.name))
    module = assemble_module(skel.code, skel.class_name, pieces)
    assert static_problems(module, skel.class_name) == []

    def methods(source: str) -> dict[str, str]:
        cls = next(n for n in ast.parse(source).body if isinstance(n, ast.ClassDef))
        return {f.name: ast.dump(f) for f in cls.body if isinstance(f, ast.FunctionDef)}

    assert skel.class_name == domain.class_name
    assert methods(module) == methods(domain.class_source)


@pytest.mark.parametrize("domain", DOMAINS, ids=IDS)
def test_operations_carry_the_domains_tool_kinds(domain):
    ops = ask(PY.OPERATIONS, inputs_for(domain)["synth.operations"]).operations
    assert {o.name: o.kind for o in ops} == domain.tool_kinds


def test_defective_variant_synthesizes_its_defective_code():
    domain = next(d for d in DOMAINS if d.defect)
    inputs = inputs_for(domain)
    target = next(o for o in ask(PY.OPERATIONS, inputs["synth.operations"]).operations
                  if o.name == "return_item")
    code = ask(PY.METHOD, inputs["synth.method"].model_copy(update={"target": target})).code
    assert "self.loans[loan_id]" in code


@pytest.mark.parametrize("domain", DOMAINS, ids=IDS)
def test_test_state_variation_picks_different_library_states(domain):
    base = inputs_for(domain)["validate.test_state"]
    states = [ask(PV.TEST_STATE, base.model_copy(update={"variation": v})).state for v in range(3)]
    assert states == domain.initial_states[:3]


@pytest.mark.parametrize("domain", DOMAINS, ids=IDS)
def test_scen_answers_reproduce_the_scenario_for_its_state(domain):
    inputs = inputs_for(domain)
    sc = domain.scenarios[0]
    assert ask(PS.TASK, inputs["scen.task"]).task == sc.task
    assert ask(PS.CHECKLIST, inputs["scen.checklist"]).items == sc.checklist
    assert ask(PS.CHECK_FUNCTION, inputs["scen.check_function"]).code == sc.checks[0]
    calls = ask(PS.REFERENCE_SOLUTION, inputs["scen.reference_solution"]).calls
    assert [c.model_dump() for c in calls] == sc.reference_solution
