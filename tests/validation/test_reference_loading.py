"""Spec: a class written in EnvScaler's own style (empty containers, `init_config` stored, the state set
in by the runtime) gets its state in every stage: Stage 3's test state (given or LLM-written, every
mode), scenario initial states and plan verification, and rollouts. Validation never rebuilds a class
from a dump of its attributes: a class whose `__init__` takes another shape than it stores is tested
on the config, and a config that does not load rejects the class with the load error."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from envscaler_core.config import Settings
from envscaler_core.llm import LLMGateway
from envscaler_core.models import EnvCandidate
from envscaler_core.rollout import replay_agent, run_rollout
from envscaler_core.scenarios.states import check_state
from envscaler_core.scenarios.verify import verify_scenario
from envscaler_core.synth import extract_tools
from envscaler_core.validation import validate_candidate
from mock_llm import library
from tests.scenarios.helpers import PLAN, STATE, scenario
from tests.validation.envscaler_style_env import (
    ENVSCALER_LIBRARY_CODE, envscaler_library_env, envscaler_style_domain_code,
)


def settings(mode: str, rounds: int = 12) -> Settings:
    return Settings.model_validate({"validate": {"mode": mode, "rounds": rounds}})


def gateway(llm_settings: Settings) -> LLMGateway:
    return LLMGateway(llm_settings.llm)


def library_candidate(kinds: dict[str, str] | None = None) -> EnvCandidate:
    return EnvCandidate(topic_fp="t", class_name="Library", class_code=ENVSCALER_LIBRARY_CODE,
                        tools=extract_tools(ENVSCALER_LIBRARY_CODE, "Library"), tool_kinds=kinds or {})


@pytest.mark.parametrize("mode", ["programmatic", "llm", "both"])
def test_validation_runs_an_envscaler_style_class_on_the_given_state_in_every_mode(
        mode: str, runtime: Any, llm_settings: Settings) -> None:
    out = asyncio.run(validate_candidate(library_candidate(), runtime, gateway(llm_settings), settings(mode),
                                         test_state=STATE))
    assert out.report.accepted, (out.report.critical, out.report.blocking, out.report.reasons)
    assert out.test_state == STATE and out.loaded_state["books"] == STATE["books"]
    lent = [r for r in out.rounds if r.tool == "lend_book" and r.observation == {"success": True, "message": "lent"}]
    assert lent and lent[0].state_before["books"]["b1"]["title"] == "Dune"  # the records were there


def test_a_test_state_the_llm_writes_loads_into_an_envscaler_style_class(runtime: Any, llm_settings: Settings) -> None:
    domain = next(d for d in library.domains() if d.name == "clinic_appointments")
    code = envscaler_style_domain_code(domain)
    cand = EnvCandidate(topic_fp="t", class_name=domain.class_name, class_code=code,
                        tools=extract_tools(code, domain.class_name))
    out = asyncio.run(validate_candidate(cand, runtime, gateway(llm_settings), settings("both")))
    assert out.report.accepted, (out.report.critical, out.report.blocking)
    assert out.test_state == domain.initial_states[0]
    assert out.loaded_state["doctors"] == domain.initial_states[0]["doctors"]
    assert out.loaded_state["init_config"] == domain.initial_states[0]  # the stored copy, not an alias


def test_scenario_states_and_plans_load_into_an_envscaler_style_class(runtime: Any) -> None:
    env = envscaler_library_env()
    loaded = check_state(env, STATE, runtime)
    assert loaded["books"] == STATE["books"] and loaded["init_config"] == STATE
    report = verify_scenario(scenario(), env, runtime, check_timeout_s=2.0)
    assert report.ok, report


def test_a_rollout_plays_an_envscaler_style_class_on_the_scenario_state(runtime: Any) -> None:
    traj = asyncio.run(run_rollout(envscaler_library_env(), scenario(), runtime, None, Settings(),
                                   agent=replay_agent(PLAN)))
    assert traj.reward == 1.0 and traj.all_passed


SHAPE_CHANGING = '''
class Todo:
    """Takes a list of todos, keeps them keyed by id, and refuses a config it does not know."""

    def __init__(self, config: dict):
        unknown = set(config) - {"todos"}
        if unknown:
            raise TypeError(f"unknown config keys: {sorted(unknown)}")
        self.items = {t["id"]: {"title": t["title"], "done": t["done"]} for t in config["todos"]}

    def complete(self, todo_id: str) -> dict:
        """Mark a to-do done."""
        if todo_id not in self.items:
            return {"success": False, "error": "no such to-do"}
        self.items[todo_id]["done"] = True
        return {"success": True, "message": "done"}

    def list_todos(self) -> dict:
        """List the to-dos."""
        return {"success": True, "data": self.items}
'''


@pytest.mark.parametrize("mode", ["programmatic", "llm", "both"])
def test_a_class_whose_init_takes_another_shape_than_it_stores_is_tested_on_the_config(
        mode: str, runtime: Any, llm_settings: Settings) -> None:
    """Its own attributes fed back as a config would raise TypeError; every episode loads the config."""
    cand = EnvCandidate(topic_fp="t", class_name="Todo", class_code=SHAPE_CHANGING,
                        tools=extract_tools(SHAPE_CHANGING, "Todo"))
    config = {"todos": [{"id": "t1", "title": "Buy milk", "done": False}]}
    out = asyncio.run(validate_candidate(cand, runtime, gateway(llm_settings), settings(mode), test_state=config))
    assert out.report.accepted, (out.report.critical, out.report.blocking)
    assert out.test_state == config and out.loaded_state["items"] == {"t1": {"title": "Buy milk", "done": False}}
    assert any(r.tool == "complete" and r.args == {"todo_id": "t1"} and r.observation["success"] for r in out.rounds)


@pytest.mark.parametrize("mode", ["programmatic", "both"])
def test_a_state_that_does_not_load_rejects_the_class_with_that_reason(
        mode: str, runtime: Any, llm_settings: Settings) -> None:
    code = ENVSCALER_LIBRARY_CODE.replace("class Library:", "class Library:\n    __slots__ = ('books', 'loans', 'init_config')")
    cand = EnvCandidate(topic_fp="t", class_name="Library", class_code=code, tools=extract_tools(code, "Library"))
    out = asyncio.run(validate_candidate(cand, runtime, gateway(llm_settings), settings(mode), test_state=STATE))
    assert not out.report.accepted and out.rounds == []  # never validated on an empty env
    assert out.failure and "no loadable test state" in out.failure
    assert out.report.critical and "slots" in out.report.critical[0]


def test_a_property_that_swallows_the_state_is_initial_state_did_not_load(runtime: Any) -> None:
    code = ENVSCALER_LIBRARY_CODE.replace("    def lend_book(", '''    @property
    def books(self):
        return {}

    @books.setter
    def books(self, value):
        pass

    def lend_book(''')
    code = code.replace("        self.books: Dict[str, BookInfo] = {}\n", "")
    cand = EnvCandidate(topic_fp="t", class_name="Library", class_code=code, tools=extract_tools(code, "Library"))
    out = asyncio.run(validate_candidate(cand, runtime, None, settings("programmatic"), test_state=STATE))
    assert not out.report.accepted and out.rounds == []
    assert out.report.critical[0].startswith("initial state did not load: attribute 'books'")
