"""Set a reply's reasoning aside before anything parses its answer.

Real endpoints deliver reasoning in several places: a `reasoning_content` (or `reasoning`) field when
the server runs a reasoning parser, a leading `<think>…</think>` block when it does not, only the
closing `</think>` when the chat template opened the block inside the prompt (DeepSeek-R1, QwQ,
Qwen3-Thinking), or an opened block that never closes. Reasoning often contains braces, fences and
draft answers, so it must never be searched for the answer, with one deliberate exception: when the
reasoning never closed (or the answer field is empty), a model that answered anyway wrote its
answer at the very end, so `tail` names the text whose *ending* may be the answer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

REASONING_FIELDS = ("reasoning_content", "reasoning", "thinking", "reasoning_details")
_TAG_NAMES = "think|thinking|reasoning"
_OPEN = re.compile(rf"\A\s*<({_TAG_NAMES})\s*>", re.IGNORECASE)
_ORPHAN_CLOSE = re.compile(rf"</({_TAG_NAMES})\s*>", re.IGNORECASE)
# gpt-oss "harmony" text from a server that did not parse it: analysis channels are reasoning, the
# final channel is the answer (commentary channels addressed to a tool are calls: see tool_calls).
_HARMONY = re.compile(r"<\|channel\|>\s*(\w+)([^<]*)(?:<\|constrain\|>\w*)?<\|message\|>(.*?)"
                      r"(?=<\|end\|>|<\|return\|>|<\|call\|>|<\|start\|>|$)", re.DOTALL)


@dataclass(frozen=True)
class SplitReply:
    """`answer`: the text a stage may parse. `reasoning`: everything set aside (None if nothing).
    `tail`: when the answer is empty because the reasoning never closed, the text whose end may hold
    the answer (None otherwise)."""

    answer: str
    reasoning: str | None
    tail: str | None = None


def clean_text(text: str) -> str:
    """Line endings to `\\n`, byte-order marks and surrounding blank space removed."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text.replace("\ufeff", "").strip()


def content_text(content: Any) -> str:
    """`content` as one string: None -> "", a list of parts (some servers send
    `[{"type": "text", "text": ...}]`) -> their texts joined."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, dict) and isinstance(part.get("text"), str):
                parts.append(part["text"])
        return "".join(parts)
    return str(content)


def reasoning_field(message: dict[str, Any]) -> str | None:
    """The reasoning a server already separated out (`reasoning_content`, `reasoning`, `thinking`,
    OpenRouter's `reasoning_details` list)."""
    found = []
    for key in REASONING_FIELDS:
        value = message.get(key)
        if isinstance(value, list):
            value = "\n".join(str(v.get("text") or v.get("summary") or "") for v in value if isinstance(v, dict))
        if isinstance(value, dict):  # e.g. {"content": "..."} or {"text": "..."}
            value = value.get("content") or value.get("text")
        if isinstance(value, str) and value.strip():
            found.append(clean_text(value))
    return "\n\n".join(found) or None


def split_reasoning(content: Any, reasoning: str | None = None) -> SplitReply:
    """Separate the answer from the reasoning in `content` (plus an already separated `reasoning`)."""
    parts = [reasoning] if reasoning else []
    text = clean_text(content_text(content))
    if "<|channel|>" in text:
        text, harmony_reasoning = harmony_final(text)
        parts += harmony_reasoning
    tail = None
    removed = False
    while (opened := _OPEN.match(text)) is not None:
        removed = True
        tag = opened.group(1)
        close = re.compile(rf"</{tag}\s*>", re.IGNORECASE).search(text, opened.end())
        if close is None:  # opened and never closed: all of it is reasoning
            inner = text[opened.end():].strip()
            parts.append(inner)
            text, tail = "", inner
            break
        parts.append(text[opened.end():close.start()].strip())
        text = text[close.end():].strip()
    if not removed:
        orphan = _ORPHAN_CLOSE.search(text)
        if orphan is not None:  # the template opened the block in the prompt: only the close is here
            parts.append(text[:orphan.start()].strip())
            text = text[orphan.end():].strip()
    if not text and tail is None and reasoning:
        tail = reasoning  # a reasoning parser swallowed a reply that never closed its reasoning
    joined = "\n\n".join(p for p in parts if p)
    return SplitReply(answer=text, reasoning=joined or None, tail=tail)


def harmony_messages(text: str) -> list[tuple[str, str, str]]:
    """(channel, header, body) of each harmony message in `text`."""
    return [(m.group(1).lower(), m.group(2).strip(), m.group(3).strip()) for m in _HARMONY.finditer(text)]


def harmony_final(text: str) -> tuple[str, list[str]]:
    """The final channel's text (the answer) and the analysis channels' texts (reasoning)."""
    messages = harmony_messages(text)
    reasoning = [body for channel, _, body in messages if channel == "analysis"]
    finals = [body for channel, _, body in messages if channel == "final"]
    return (finals[-1] if finals else ""), reasoning
