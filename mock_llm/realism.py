"""Answer like real endpoints: the same meaning in the forms real models and servers send.

The brain writes clean answers (one compact JSON object, OpenAI-shaped tool calls, `usage` always).
With realism on, the server re-renders each answer in other forms real endpoints use, chosen
deterministically from a hash of the request (messages, tools, model, prompt tag; never the output
limit, so a retry with more room gets the same forms), and the brain writes env classes in other
styles (`library.styles`). The meaning never changes: a parser that copes gets exactly the clean
answer back.

Settings (`envscaler mock-llm --realism`, `ENVSCALER_MOCK_REALISM`, `POST /mock/realism`):
- `off` (default): clean answers;
- `on`: each request draws its forms (`MIXED_RATES`), each env class its code styles (half each);
- `all`: every form at once (one member per exclusive group, by hash) and every code style;
- a comma-separated list of form/style names: exactly those, wherever they apply.
"""

from __future__ import annotations

import hashlib
import json
import random
import string
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

CODE_STYLES = ("envscaler_class", "dataclass_records", "typing_annotations", "methods_reordered")
"""How the brain may write env classes (see `library.styles`)."""
GROUPS: dict[str, tuple[str, ...]] = {
    "syntax": ("pretty", "python_literal", "trailing_comma", "comments"),
    "wrapper": ("prose_fence", "bare_fence", "prose_inline", "example_first"),
    "reasoning": ("think", "think_unclosed", "think_no_open", "reasoning_field"),
    "arguments": ("pretty_args", "padded_args", "args_object"),
}
"""Forms of one group exclude each other (one JSON syntax, one wrapper, one place for reasoning)."""
SINGLES = ("crlf_bom", "code_fenced", "no_usage", "length", "extra_fields", "text_beside", "foreign_ids",
           "type_missing", "empty_args", "tool_text")
FORMS = tuple(f for group in GROUPS.values() for f in group) + SINGLES
MIXED_RATES: dict[str, float] = {
    "syntax": 0.25, "wrapper": 0.4, "reasoning": 0.35, "arguments": 0.3, "crlf_bom": 0.1, "code_fenced": 0.3,
    "no_usage": 0.25, "length": 0.02, "extra_fields": 0.3, "text_beside": 0.3, "foreign_ids": 0.5,
    "type_missing": 0.15, "empty_args": 0.5, "tool_text": 0.1,
}
"""Per request in `on` mode: the chance of each group (then a member uniformly) or single form.
Truncation is rare on purpose: each one costs a request (the retry with more room)."""
CODE_STYLE_RATE = 0.5
TRUNCATE_AT = 0.6  # a "length" reply keeps this share of its characters


class RealismConfig(BaseModel):
    """`mode` off | on | all | exact (`names` then lists the forms and code styles to use)."""

    model_config = ConfigDict(extra="forbid")

    mode: Literal["off", "on", "all", "exact"] = "off"
    names: list[str] = Field(default_factory=list)

    @field_validator("names")
    @classmethod
    def _known(cls, names: list[str]) -> list[str]:
        problem = unknown_names(names)
        if problem:
            raise ValueError(problem)
        return names

    @classmethod
    def parse(cls, spec: str | None) -> "RealismConfig":
        """`off`, `on`, `all` or `form,form,...` (the CLI flag and the env var)."""
        text = (spec or "off").strip().lower()
        if text in ("", "off", "0", "false", "no", "none"):
            return cls()
        if text in ("on", "1", "true", "yes", "mixed"):
            return cls(mode="on")
        if text == "all":
            return cls(mode="all")
        names = [n.strip() for n in text.split(",") if n.strip()]
        problem = unknown_names(names)
        if problem:
            raise ValueError(problem)
        return cls(mode="exact", names=names)


def unknown_names(names: list[str]) -> str | None:
    """One line naming the unknown forms and listing the known ones, or None."""
    unknown = sorted(set(names) - set(FORMS) - set(CODE_STYLES))
    if not unknown:
        return None
    return (f"unknown realism form(s) {', '.join(unknown)} (expected off, on, all or forms among "
            f"{', '.join(FORMS)}; code styles {', '.join(CODE_STYLES)})")


@dataclass(frozen=True)
class Plan:
    """How one request's answer looks: its forms, its code styles (None = per class, by hash) and a seed."""

    forms: frozenset[str]
    code_styles: frozenset[str] | None
    seed: int

    def rng(self, *salt: str) -> random.Random:
        return random.Random(f"{self.seed}:{':'.join(salt)}")


def request_key(body: dict[str, Any], tag: str | None) -> int:
    """Hash of what the request asks (not of its output limit: a retry with more room keeps its forms)."""
    canonical = json.dumps({"messages": body.get("messages"), "tools": body.get("tools"), "model": body.get("model"),
                            "prompt": tag}, sort_keys=True, separators=(",", ":"), default=str)
    return int(hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:15], 16)


def plan_for(config: RealismConfig, key: int) -> Plan | None:
    if config.mode == "off":
        return None
    rng = random.Random(key)
    if config.mode == "exact":
        names = set(config.names)
        return Plan(frozenset(names & set(FORMS)), frozenset(names & set(CODE_STYLES)), key)
    if config.mode == "all":
        chosen = {rng.choice(members) for members in GROUPS.values()} | set(SINGLES)
        return Plan(frozenset(chosen), frozenset(CODE_STYLES), key)
    chosen = set()
    for group, members in GROUPS.items():
        if rng.random() < MIXED_RATES[group]:
            chosen.add(rng.choice(members))
    chosen |= {f for f in SINGLES if rng.random() < MIXED_RATES[f]}
    return Plan(frozenset(chosen), None, key)


def code_styles_for(plan: Plan | None, class_name: str) -> frozenset[str]:
    """The code styles of one env class: fixed per class, so its skeleton and methods agree."""
    if plan is None:
        return frozenset()
    if plan.code_styles is not None:
        return plan.code_styles
    rng = random.Random(f"code-style:{class_name}")
    return frozenset(s for s in CODE_STYLES if rng.random() < CODE_STYLE_RATE)


def needed_room(message: dict[str, Any]) -> int:
    """The answer's size in (mock) tokens, as the server counts them."""
    chars = len(message.get("content") or "") + len(message.get("reasoning_content") or "")
    for call in message.get("tool_calls") or []:
        args = call["function"]["arguments"]
        chars += len(args if isinstance(args, str) else json.dumps(args))
    return max(1, -(-chars // 4))


def truncate(message: dict[str, Any], room: int) -> dict[str, Any]:
    """The message cut off where an output limit of `room` tokens would cut it (each text in proportion)."""
    keep = min(1.0, room / needed_room(message))
    out = dict(message)
    if isinstance(out.get("content"), str) and out["content"]:
        out["content"] = out["content"][: int(len(out["content"]) * keep)]
    if out.get("tool_calls"):
        calls = []
        for call in out["tool_calls"]:
            args = call["function"]["arguments"]
            text = args if isinstance(args, str) else json.dumps(args)
            calls.append({**call, "function": {**call["function"], "arguments": text[: int(len(text) * keep)]}})
        out["tool_calls"] = calls
    return out


def foreign_id(style: int, rng: random.Random, name: str, index: int) -> str:
    alnum = string.ascii_letters + string.digits
    if style == 0:
        return f"call_{index}"
    if style == 1:
        return "toolu_01" + "".join(rng.choice(alnum) for _ in range(22))
    if style == 2:
        return "".join(rng.choice(alnum) for _ in range(9))
    return f"functions.{name}:{index}"


def group_member(plan: Plan, group: str) -> str | None:
    """The plan's form from an exclusive group, if it has one."""
    return next((f for f in GROUPS[group] if f in plan.forms), None)
