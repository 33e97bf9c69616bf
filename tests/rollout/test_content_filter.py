"""Spec: an agent turn stopped by the endpoint's content filter ends that episode (not the run) as
'error', scored as far as it got, and the trajectory and the filter's drop reason say "content filter"
(the stop is not retried: docs/llm.md, "cut-off replies"). Over the real gateway and `openai` client
against a scripted local endpoint, in the real sandbox."""

from __future__ import annotations

import asyncio
import json

from envscaler_core.config import Settings
from envscaler_core.llm import LLMGateway
from envscaler_core.prompts.agent import AGENT_NON_CONVERSATIONAL
from envscaler_core.rollout import run_rollout
from envscaler_core.rollout.agents import LLMAgent
from envscaler_core.rollout.filters import drop_reasons
from tests.fixtures.llm import mock_llm_settings
from tests.llm.scripted_endpoint import ScriptedEndpoint, completion
from tests.scenarios.helpers import PLAN, library_env, scenario


def test_a_content_filter_stop_ends_the_episode_as_error_saying_content_filter(runtime) -> None:
    first = PLAN[0]
    call = {"id": "c1", "type": "function", "function": {"name": first.tool, "arguments": json.dumps(first.args)}}
    filtered = completion(None, finish="content_filter")
    filtered["choices"][0]["content_filter_results"] = {"violence": {"filtered": True, "severity": "medium"}}
    server = ScriptedEndpoint().start()
    try:
        server.script(completion(None, finish="tool_calls", tool_calls=[call]), filtered)
        gateway = LLMGateway(mock_llm_settings(server.base_url, cache=False))
        settings = Settings.model_validate({"rollout": {"mode": "non_conversational"}})
        agent = LLMAgent(gateway, AGENT_NON_CONVERSATIONAL, "m")
        traj = asyncio.run(run_rollout(library_env(), scenario(), runtime, gateway, settings, agent=agent))
    finally:
        server.stop()
    assert traj.termination == "error" and traj.steps == 1 and len(server.requests) == 2
    assert "content filter" in (traj.error or "") and "content_filter" in traj.error
    assert traj.reward == 0.5  # the call it made still counts
    assert any("content filter" in r for r in drop_reasons(traj, settings.rollout))
