"""Prompts as typed, versioned values, laid out so providers' prefix caches can serve them.

A `PromptSpec` pairs a system text with a pydantic input model and a pydantic output model. The system
message carries the output's JSON Schema, so a real model knows the shape and a parser needs no
markdown-header heuristics (the reference's char-set `strip` bugs come from those). The input goes
into the user message as compact JSON blocks:

- `## Context`: the input fields named in `context`, the large part that stays the same across the
  many calls about one item (class code, tools, rules, a scenario's state and task);
- then the instructions and `## Input`: the fields that vary from call to call, last.

Providers cache computed prompt prefixes (OpenAI automatically from 1,024 tokens, in 128-token steps;
vLLM and SGLang with prefix caching on), so everything before the first differing token of a repeated
prompt is billed at the cached rate (a quarter of the input price for GPT-4.1) and not recomputed. A
prompt that is a conversation (`render(inp, history)`: earlier turns' varying fields and answers, then
this turn's) only ever appends, so each turn's prompt is the previous one plus the new exchange.

Prompts of one family (several steps about the same item) can share one cached prefix: they carry the
same `system` text (without an output schema) and the same leading context fields, and each step's
own `role` text and output schema come right after that context. Their first request warms the cache
for the others.

Every request is tagged with the header `X-EnvScaler-Prompt: <id>@<version>`: the version is part of
the cache key (changing a prompt, or its layout, invalidates its cached answers), and the bundled mock
LLM server uses the tag to know which question it is answering.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from collections.abc import Sequence
from typing import Any, Generic, TypeVar

from pydantic import BaseModel

PROMPT_HEADER = "X-EnvScaler-Prompt"
INPUT_HEADING = "## Input"
CONTEXT_HEADING = "## Context"
_BLOCK_START = re.compile(r"(## Input|## Context)\s*```json\s*")

I = TypeVar("I", bound=BaseModel)
O = TypeVar("O", bound=BaseModel)


@dataclass(frozen=True)
class PromptSpec(Generic[I, O]):
    """A structured prompt: `render(input)` gives chat messages; replies parse into `output_model`.

    `context` names the input fields sent first and once (see the module docstring); the others are
    this call's varying part, sent last. With `role`, `system` is a family's shared text and the role
    and output schema follow the context instead of sitting in the system message."""

    id: str
    version: int
    system: str
    instructions: str
    input_model: type[I]
    output_model: type[O]
    context: tuple[str, ...] = ()
    role: str = ""

    def __post_init__(self) -> None:
        unknown = [f for f in self.context if f not in self.input_model.model_fields]
        if unknown:
            raise ValueError(f"prompt {self.id}: context fields {unknown} are not fields of {self.input_model.__name__}")

    @property
    def tag(self) -> str:
        return f"{self.id}@{self.version}"

    @property
    def turn_fields(self) -> set[str]:
        return set(self.input_model.model_fields) - set(self.context)

    def _reply_contract(self) -> str:
        return reply_contract(self.output_model)

    def system_text(self) -> str:
        if self.role:
            return self.system.strip()
        return f"{self.system.strip()}\n\n{self._reply_contract()}"

    def _turn(self, inp: I) -> str:
        return f"{self.instructions.strip()}\n\n{INPUT_HEADING}\n```json\n{inp.model_dump_json(include=self.turn_fields)}\n```"

    def render(self, inp: I, history: Sequence[tuple[I, O]] = ()) -> list[dict[str, Any]]:
        """[system, user] for one call; with `history` (earlier turns' inputs and answers, oldest first)
        a conversation whose context is the first turn's and which grows only at its end."""
        for item in (inp, *(h[0] for h in history)):
            if not isinstance(item, self.input_model):
                raise TypeError(f"prompt {self.id} expects {self.input_model.__name__}, got {type(item).__name__}")
        first = history[0][0] if history else inp
        head = ""
        if self.context:
            head = f"{CONTEXT_HEADING}\n```json\n{first.model_dump_json(include=set(self.context))}\n```\n\n"
        if self.role:
            head += f"{self.role.strip()}\n\n{self._reply_contract()}\n\n"
        turns = [*(h[0] for h in history), inp]
        messages: list[dict[str, Any]] = [{"role": "system", "content": self.system_text()},
                                          {"role": "user", "content": head + self._turn(turns[0])}]
        for (_, answer), nxt in zip(history, turns[1:], strict=True):
            messages.append({"role": "assistant", "content": answer.model_dump_json()})
            messages.append({"role": "user", "content": self._turn(nxt)})
        return messages


@lru_cache(maxsize=None)
def reply_contract(output_model: type[BaseModel]) -> str:
    """The JSON-contract paragraph of a structured prompt; pydantic rebuilds a schema on every call
    (4% of the orchestrator's CPU when every request rendered it anew), and a model's schema is fixed."""
    schema = json.dumps(output_model.model_json_schema(), separators=(",", ":"))
    return f"Reply with exactly one JSON object and nothing else. It must validate against this JSON Schema:\n{schema}"


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


def _block(content: str, heading: str) -> dict[str, Any] | None:
    """The JSON object right after `heading` + a ```json fence in `content`, decoded exactly (a code
    string inside it may hold braces or fences), or None."""
    for match in _BLOCK_START.finditer(content):
        if match.group(1) == heading:
            value, _ = json.JSONDecoder().raw_decode(content, match.end())
            return value if isinstance(value, dict) else None
    return None


def extract_turns(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every user turn's input (context merged in), oldest first: what a conversation prompt asked."""
    context: dict[str, Any] = {}
    turns: list[dict[str, Any]] = []
    for message in messages:
        content = message.get("content")
        if message.get("role") != "user" or not isinstance(content, str):
            continue
        if not context:
            context = _block(content, CONTEXT_HEADING) or {}
        turn = _block(content, INPUT_HEADING)
        if turn is not None:
            turns.append({**context, **turn})
    return turns


def extract_input(messages: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The input of the last user turn that has one (context merged in): what the mock reads. Repair
    turns carry no input block, so a repaired call still reads the input it repairs."""
    turns = extract_turns(messages)
    return turns[-1] if turns else None


def extract_answers(messages: list[dict[str, Any]]) -> list[dict[str, Any] | None]:
    """The assistant turns of a conversation prompt as JSON objects (None where one is not JSON)."""
    out: list[dict[str, Any] | None] = []
    for message in messages:
        if message.get("role") == "assistant":
            try:
                value = json.loads(message.get("content") or "")
            except (TypeError, ValueError):
                value = None
            out.append(value if isinstance(value, dict) else None)
    return out
