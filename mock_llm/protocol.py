"""The seam between the mock's HTTP layer and its brain.

The server parses an OpenAI chat-completions request into a `MockRequest` (prompt tag from the
`X-EnvScaler-Prompt` header, the JSON input block if the prompt has one, raw messages and tools) and
turns the brain's `MockReply` back into an OpenAI response with usage. Handlers are plain functions,
so they are unit-testable without HTTP.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    from mock_llm.realism import Plan


@dataclass(frozen=True)
class MockRequest:
    prompt_id: str | None  # e.g. "mine.judge_stateful"; None when the request had no tag
    prompt_version: int | None
    payload: dict[str, Any] | None  # the `## Input` JSON block, for structured prompts
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] | None
    model: str
    realism: "Plan | None" = None  # how this answer should look (forms, env code styles); None = clean


@dataclass(frozen=True)
class MockToolCall:
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class MockReply:
    content: str | None = None
    tool_calls: list[MockToolCall] = field(default_factory=list)


class MockCannotAnswer(Exception):
    """The mock has no scripted answer for this request; the server returns HTTP 400 with this text."""


Handler = Callable[[MockRequest], MockReply]
