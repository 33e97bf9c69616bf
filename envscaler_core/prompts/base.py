"""Prompts as typed, versioned values.

A `PromptSpec` pairs a system text with a pydantic input model and a pydantic output model. The
rendered user message carries the input as one fenced JSON block under `## Input`, and the system
message carries the output's JSON Schema, so a real model knows the shape and a parser needs no
markdown-header heuristics (the reference's char-set `strip` bugs come from those).

Every request is tagged with the header `X-EnvScaler-Prompt: <id>@<version>`: the version is part of
the cache key (changing a prompt invalidates its cached answers), and the bundled mock LLM server
uses the tag to know which question it is answering.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from pydantic import BaseModel

PROMPT_HEADER = "X-EnvScaler-Prompt"
INPUT_HEADING = "## Input"
_INPUT_BLOCK = re.compile(r"## Input\s*```json\s*(\{.*\})\s*```", re.DOTALL)

I = TypeVar("I", bound=BaseModel)
O = TypeVar("O", bound=BaseModel)


@dataclass(frozen=True)
class PromptSpec(Generic[I, O]):
    """A structured prompt: `render(input)` gives chat messages; replies parse into `output_model`."""

    id: str
    version: int
    system: str
    instructions: str
    input_model: type[I]
    output_model: type[O]

    @property
    def tag(self) -> str:
        return f"{self.id}@{self.version}"

    def render(self, inp: I) -> list[dict[str, Any]]:
        if not isinstance(inp, self.input_model):
            raise TypeError(f"prompt {self.id} expects {self.input_model.__name__}, got {type(inp).__name__}")
        schema = json.dumps(self.output_model.model_json_schema(), separators=(",", ":"))
        system = (
            f"{self.system.strip()}\n\n"
            "Reply with exactly one JSON object and nothing else. It must validate against this JSON Schema:\n"
            f"{schema}"
        )
        user = f"{self.instructions.strip()}\n\n{INPUT_HEADING}\n```json\n{inp.model_dump_json(indent=2)}\n```"
        return [{"role": "system", "content": system}, {"role": "user", "content": user}]


@dataclass(frozen=True)
class ChatPrompt:
    """A free-form chat role (agent, simulated user): a tagged system text, no JSON contract."""

    id: str
    version: int
    system: str

    @property
    def tag(self) -> str:
        return f"{self.id}@{self.version}"


def parse_tag(tag: str) -> tuple[str, int]:
    """`'mine.judge@1'` -> `('mine.judge', 1)`; raises ValueError naming the bad tag."""
    name, sep, version = tag.rpartition("@")
    if not sep or not name or not version.isdigit():
        raise ValueError(f"malformed prompt tag {tag!r}: expected '<id>@<version>'")
    return name, int(version)


def extract_input(messages: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The JSON input block of the first user message that has one (what the mock reads)."""
    for message in messages:
        content = message.get("content")
        if message.get("role") == "user" and isinstance(content, str):
            match = _INPUT_BLOCK.search(content)
            if match:
                return json.loads(match.group(1))
    return None
