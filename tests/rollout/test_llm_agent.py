"""Spec: the default LLM agent, over the real openai client and the real mock server, solves a library
scenario in both modes."""

from __future__ import annotations

import asyncio

import pytest

from envscaler_core.config import Settings
from envscaler_core.models.scenario import CheckSpec, Scenario, ToolCall
from envscaler_core.rollout import run_rollout
from tests.scenarios.helpers import domain_env, library_domains


def library_scenario() -> tuple:
    domain = library_domains()[0]
    ref = domain.scenarios[0]
    sc = Scenario(
        env_id=f"env_{domain.class_name.lower()}", initial_state=ref.initial_state, task=ref.task,
        checklist=list(ref.checklist),
        checks=[CheckSpec(item=i, code=c) for i, c in zip(ref.checklist, ref.checks)],
        reference_solution=[ToolCall.model_validate(c if isinstance(c, dict) else c.model_dump())
                            for c in ref.reference_solution],
        status="verified",
    )
    return domain_env(domain), sc


@pytest.mark.parametrize("mode", ["non_conversational", "conversational"])
def test_llm_agent_completes_a_library_scenario(runtime, gateway, mode):
    env, sc = library_scenario()
    settings = Settings.model_validate({"rollout": {"mode": mode}})
    traj = asyncio.run(run_rollout(env, sc, runtime, gateway, settings))
    assert traj.reward == 1.0 and traj.all_passed, traj.check_results
    assert traj.termination == ("user_stop" if mode == "conversational" else "agent_done")
    assert traj.usage.prompt_tokens > 0 and traj.agent_model == settings.llm.models.agent


def test_second_sample_of_a_scenario_is_really_played_not_served_from_cache(runtime, request):
    from envscaler_core.llm import LLMGateway

    mock = request.getfixturevalue("mock_stats_reset")
    settings = request.getfixturevalue("llm_settings")
    env, sc = library_scenario()
    gateway = LLMGateway(settings.llm)  # one gateway: its in-memory cache is shared by both samples
    asyncio.run(run_rollout(env, sc, runtime, gateway, settings, sample=0))
    first = mock.stats()["by_prompt"].get("agent.solve", 0)
    asyncio.run(run_rollout(env, sc, runtime, gateway, settings, sample=1))
    assert first > 0 and mock.stats()["by_prompt"].get("agent.solve", 0) == 2 * first
