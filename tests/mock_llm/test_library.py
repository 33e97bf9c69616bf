"""Spec: the mock library's domains are real env classes with verified scenarios.

Scenario verification runs through the real sandbox (`sandbox_pool`) and the real `verify_scenario`."""

from __future__ import annotations

import ast
import json

import pytest

from mock_llm import library
from envscaler_core.models.env import AcceptedEnv
from envscaler_core.models.scenario import CheckSpec, Scenario, ToolCall
from envscaler_core.scenarios import verify_scenario
from envscaler_core.synth import extract_tools, static_problems

DOMAINS = library.domains()
IDS = [d.name for d in DOMAINS]
SCENARIOS = [(d, i) for d in DOMAINS for i in range(len(d.scenarios))]
SCENARIO_IDS = [f"{d.name}-{i}" for d, i in SCENARIOS]


def test_library_has_five_healthy_domains_before_two_defective_ones():
    defects = [d.defect for d in DOMAINS]
    healthy = [d for d in defects if d is None]
    assert len(healthy) >= 5 and len(defects) - len(healthy) >= 2
    assert defects == sorted(defects, key=lambda x: x is not None)


@pytest.mark.parametrize("domain", DOMAINS, ids=IDS)
def test_class_passes_static_checks(domain):
    assert static_problems(domain.class_source, domain.class_name) == []


@pytest.mark.parametrize("domain", DOMAINS, ids=IDS)
def test_file_holds_one_top_level_class_without_base(domain):
    classes = [n for n in ast.parse(domain.class_source).body if isinstance(n, ast.ClassDef)]
    assert [c.name for c in classes] == [domain.class_name] and not classes[0].bases


@pytest.mark.parametrize("domain", DOMAINS, ids=IDS)
def test_tool_kinds_cover_exactly_the_extracted_tools(domain):
    names = {t.function.name for t in extract_tools(domain.class_source, domain.class_name)}
    assert names == set(domain.tool_kinds)
    assert set(domain.tool_kinds.values()) == {"query", "state_change"}


@pytest.mark.parametrize("domain", DOMAINS, ids=IDS)
def test_domain_has_three_distinct_json_initial_states(domain):
    texts = {json.dumps(s, sort_keys=True) for s in domain.initial_states}
    assert len(texts) == len(domain.initial_states) >= 3
    assert all(json.loads(t) in domain.initial_states for t in texts)


@pytest.mark.parametrize("domain", DOMAINS, ids=IDS)
def test_every_scenario_starts_from_one_of_the_domains_states(domain):
    assert domain.scenarios and all(sc.initial_state in domain.initial_states for sc in domain.scenarios)


@pytest.mark.parametrize("domain", DOMAINS, ids=IDS)
def test_every_scenario_task_routes_back_to_its_domain(domain):
    assert [library.route(sc.task) for sc in domain.scenarios] == [domain] * len(domain.scenarios)


def test_route_returns_none_for_text_without_domain_keywords():
    assert library.route("What is the capital of France?") is None


def test_by_name_accepts_name_class_name_and_summary():
    d = DOMAINS[0]
    assert library.by_name(d.name) is library.by_name(d.class_name) is library.by_name(d.summary.upper()) is d


def test_by_name_rejects_unknown_names():
    with pytest.raises(KeyError, match="no library domain"):
        library.by_name("spaceship hangar")


def _env(domain) -> AcceptedEnv:
    return AcceptedEnv(env_id=f"env_{domain.name}", candidate_fp="0" * 64, summary=domain.summary,
                       introduction=domain.introduction, rules=domain.rules, class_name=domain.class_name,
                       class_code=domain.class_source, tools=extract_tools(domain.class_source, domain.class_name),
                       tool_kinds=domain.tool_kinds, score=1.0, validation_mode="programmatic")


@pytest.mark.parametrize(("domain", "index"), SCENARIOS, ids=SCENARIO_IDS)
def test_scenario_checks_are_false_initially_and_true_after_the_reference_solution(sandbox_pool, domain, index):
    sc = domain.scenarios[index]
    scenario = Scenario(env_id=f"env_{domain.name}", initial_state=sc.initial_state, task=sc.task,
                        checklist=sc.checklist, checks=[CheckSpec(item=i, code=c) for i, c in zip(sc.checklist, sc.checks)],
                        reference_solution=[ToolCall.model_validate(c) for c in sc.reference_solution])
    report = verify_scenario(scenario, _env(domain), sandbox_pool, 5.0)
    assert report.ok, report.reason
    assert all(s.ok and s.success for s in report.solution)
