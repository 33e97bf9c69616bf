"""Spec: generate_scenarios builds states, tasks, checks and plans, verifies them, repairs a bounded
number of times, and stores what still fails as rejected with the reason.

`ScriptedLLM` stands in for the model at the gateway seam (`structured(prompt, input, stage)`): it is
a deterministic "LLM" whose answers we choose (good, vacuous, inconsistent), so the bound on repairs is
observable. The end-to-end run over the real mock server is in test_generate_mock.py.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

from envscaler_core.config import Settings
from envscaler_core.models.scenario import ToolCall
from envscaler_core.scenarios import generate_scenarios
from tests.scenarios.helpers import LENT_B1, LOAN_ANA, PLAN, STATE, VACUOUS, library_env


class ScriptedLLM:
    def __init__(self, checks: dict[str, list[str]], states: list[dict[str, Any]] | None = None) -> None:
        self.checks = checks  # item -> successive check codes (last one repeats)
        self.states = list(states or [STATE])
        self.calls: Counter[str] = Counter()
        self.per_item: Counter[str] = Counter()
        self.feedback: list[str | None] = []

    async def structured(self, prompt, inp, stage: str):
        assert stage == ("check" if prompt.id.startswith("scen.check_function") else "scen")  # checks: the small model
        self.calls[prompt.id] += 1
        self.feedback.append(getattr(inp, "feedback", None))
        out = prompt.output_model
        if prompt.id == "scen.initial_state":
            state = self.states[min(self.calls[prompt.id] - 1, len(self.states) - 1)]
            return out(analysis="", state=state)
        if prompt.id == "scen.task":
            return out(analysis="", task="Lend Dune (b1) and Emma (b2) to Ana.")
        if prompt.id == "scen.checklist":
            return out(analysis="", items=list(self.checks))
        if prompt.id == "scen.check_function":
            return out(analysis="", code=self._code(inp.item))
        if prompt.id == "scen.check_functions":
            return out(checks=[{"id": it.id, "analysis": "", "code": self._code(it.item)} for it in inp.items])
        if prompt.id == "scen.reference_solution":
            return out(analysis="", calls=[ToolCall.model_validate(c.model_dump()) for c in PLAN])
        raise AssertionError(f"unexpected prompt {prompt.id}")

    def _code(self, item: str) -> str:
        codes = self.checks[item]
        self.per_item[item] += 1
        return codes[min(self.per_item[item] - 1, len(codes) - 1)]


def settings(**scen: Any) -> Settings:
    return Settings.model_validate({"scen": {"per_env": 1, **scen}})


def test_good_answers_yield_a_verified_scenario(runtime):
    llm = ScriptedLLM({LENT_B1.item: [LENT_B1.code], LOAN_ANA.item: [LOAN_ANA.code]})
    [sc] = asyncio.run(generate_scenarios(library_env(), runtime, llm, settings()))
    assert sc.status == "verified" and sc.rejection_reason is None and sc.repair_attempts == 0
    assert [c.item for c in sc.checks] == sc.checklist and sc.reference_solution == PLAN


def test_the_checks_of_a_checklist_are_written_in_one_request(runtime):
    llm = ScriptedLLM({LENT_B1.item: [LENT_B1.code], LOAN_ANA.item: [LOAN_ANA.code]})
    [sc] = asyncio.run(generate_scenarios(library_env(), runtime, llm, settings()))
    assert sc.status == "verified"
    assert llm.calls["scen.check_functions"] == 1 and llm.calls["scen.check_function"] == 0


def test_a_vacuous_check_from_the_batch_is_repaired_on_its_own(runtime):
    llm = ScriptedLLM({LENT_B1.item: [VACUOUS.code, LENT_B1.code], LOAN_ANA.item: [LOAN_ANA.code]})
    [sc] = asyncio.run(generate_scenarios(library_env(), runtime, llm, settings(repair_attempts=2)))
    assert sc.status == "verified" and sc.repair_attempts == 1
    assert llm.calls["scen.check_functions"] == 1 and llm.calls["scen.check_function"] == 1


def test_one_scenario_per_configured_initial_state(runtime):
    llm = ScriptedLLM({LENT_B1.item: [LENT_B1.code]})
    scs = asyncio.run(generate_scenarios(library_env(), runtime, llm, settings(per_env=3)))
    assert len(scs) == 3 and llm.calls["scen.initial_state"] == 3


def test_vacuous_check_is_repaired_from_the_diagnosis(runtime):
    llm = ScriptedLLM({LENT_B1.item: [VACUOUS.code, LENT_B1.code]})
    [sc] = asyncio.run(generate_scenarios(library_env(), runtime, llm, settings(repair_attempts=2)))
    assert sc.status == "verified" and sc.repair_attempts == 1
    assert any(f and "vacuous" in f for f in llm.feedback)


def test_repair_loop_is_bounded_and_the_scenario_rejected_with_reason(runtime):
    llm = ScriptedLLM({LENT_B1.item: [VACUOUS.code]})
    [sc] = asyncio.run(generate_scenarios(library_env(), runtime, llm, settings(repair_attempts=2)))
    assert sc.status == "rejected" and sc.repair_attempts == 2
    assert "already True on the initial state" in sc.rejection_reason
    assert llm.calls["scen.check_function"] == 3  # first attempt + 2 repairs


def test_state_the_query_tools_cannot_read_is_regenerated_with_feedback(runtime):
    broken = {"books": [{"book_id": "b1"}], "loans": []}  # list_books calls .values() on it
    llm = ScriptedLLM({LENT_B1.item: [LENT_B1.code]}, states=[broken, STATE])
    [sc] = asyncio.run(generate_scenarios(library_env(), runtime, llm, settings()))
    assert sc.status == "verified" and sc.initial_state == STATE
    assert any(f and "list_books" in f for f in llm.feedback)


def test_state_never_consistent_is_rejected_with_reason(runtime):
    broken = {"books": [{"book_id": "b1"}], "loans": []}
    llm = ScriptedLLM({LENT_B1.item: [LENT_B1.code]}, states=[broken])
    [sc] = asyncio.run(generate_scenarios(library_env(), runtime, llm, settings(repair_attempts=1)))
    assert sc.status == "rejected" and sc.rejection_reason.startswith("initial state:")
    assert llm.calls["scen.initial_state"] == 2 and llm.calls["scen.task"] == 0
