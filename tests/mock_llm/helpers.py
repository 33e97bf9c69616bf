"""Requests built the way the real server builds them (rendered prompt -> `extract_input`), and
episodes of the library's classes in the real sandbox pool."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from mock_llm import brain
from mock_llm.library.model import Domain
from mock_llm.protocol import MockReply, MockRequest
from envscaler_core.prompts import ChatPrompt, PromptSpec, extract_input
from envscaler_core.synth import extract_tools


def request_for(spec: PromptSpec, inp: BaseModel) -> MockRequest:
    messages = spec.render(inp)
    return MockRequest(prompt_id=spec.id, prompt_version=spec.version, payload=extract_input(messages),
                       messages=messages, tools=None, model="mock")


def ask(spec: PromptSpec, inp: BaseModel) -> Any:
    """Dispatch a rendered structured prompt and parse the reply as the gateway would."""
    reply = brain.dispatch(request_for(spec, inp))
    assert reply.content is not None and not reply.tool_calls
    return spec.output_model.model_validate_json(reply.content)


def chat(prompt: ChatPrompt, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> MockReply:
    return brain.dispatch(MockRequest(prompt_id=prompt.id, prompt_version=prompt.version, payload=None,
                                      messages=messages, tools=tools, model="mock"))


def tool_dicts(domain: Domain) -> list[dict[str, Any]]:
    return [t.model_dump() for t in extract_tools(domain.class_source, domain.class_name)]


class SandboxEpisode:
    def __init__(self, pool: Any, domain: Domain, state: dict[str, Any]) -> None:
        self.ep = pool.open_episode(domain.class_source, domain.class_name, state, tools=tool_dicts(domain))

    @property
    def state(self) -> dict[str, Any]:
        return self.ep.state

    def call(self, tool: str, args: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        out = self.ep.call(tool, args)
        observation = out.result if out.ok else {"error": out.error, "error_kind": out.error_kind}
        return observation, out.state

    def close(self) -> None:
        self.ep.close()


def open_env(request: pytest.FixtureRequest, domain: Domain, state: dict[str, Any]) -> "SandboxEpisode":
    return SandboxEpisode(request.getfixturevalue("sandbox_pool"), domain, state)
