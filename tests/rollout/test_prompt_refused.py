"""Spec: a rollout and the batch stages agree on what an endpoint's refusal ends. This episode's prompt
refused for itself (over the context, a prompt filter: `LLMPromptRefused`) ends the episode as 'error',
scored as far as it got, as the batch stages fail that one item; a request refused for its form (an
unsupported parameter: every episode would meet it) stops the run. Over the real gateway and `openai`
client against a scripted local endpoint, in the real sandbox."""

from __future__ import annotations

import asyncio
import json

import pytest

from envscaler_core.config import Settings
from envscaler_core.llm import LLMGateway, LLMRequestRejected
from envscaler_core.prompts.agent import AGENT_NON_CONVERSATIONAL
from envscaler_core.rollout import run_rollout
from envscaler_core.rollout.agents import LLMAgent
from tests.fixtures.llm import mock_llm_settings
from tests.llm.scripted_endpoint import STATUS, ScriptedEndpoint, completion
from tests.scenarios.helpers import PLAN, library_env, scenario

CONTEXT = {STATUS: 400, "error": {"message": "This model's maximum context length is 8192 tokens. However, your messages "
                                  "resulted in 9120 tokens.", "type": "invalid_request_error", "param": "messages",
                                  "code": "context_length_exceeded"}}
UNSUPPORTED = {STATUS: 400, "error": {"message": "Unsupported parameter: 'tools' is not supported with this model.",
                                      "type": "invalid_request_error", "param": "tools", "code": "unsupported_parameter"}}


def _play(runtime, *responses):
    first = PLAN[0]
    call = {"id": "c1", "type": "function", "function": {"name": first.tool, "arguments": json.dumps(first.args)}}
    server = ScriptedEndpoint().start()
    try:
        server.script(completion(None, finish="tool_calls", tool_calls=[call]), *responses)
        gateway = LLMGateway(mock_llm_settings(server.base_url, cache=False))
        settings = Settings.model_validate({"rollout": {"mode": "non_conversational"}})
        agent = LLMAgent(gateway, AGENT_NON_CONVERSATIONAL, "m")
        return asyncio.run(run_rollout(library_env(), scenario(), runtime, gateway, settings, agent=agent)), server
    finally:
        server.stop()


def test_a_prompt_over_the_context_ends_the_episode_as_error_quoting_the_server(runtime) -> None:
    traj, server = _play(runtime, CONTEXT)
    assert traj.termination == "error" and traj.steps == 1 and len(server.requests) == 2
    assert "maximum context length is 8192" in (traj.error or "")
    assert traj.reward == 0.5  # the call it made still counts


def test_a_request_refused_for_its_form_stops_the_rollout(runtime) -> None:
    """Before: any 400 ended the episode, while the batch stages stopped the run on the same 400."""
    with pytest.raises(LLMRequestRejected, match="'tools' is not supported"):
        _play(runtime, UNSUPPORTED)
