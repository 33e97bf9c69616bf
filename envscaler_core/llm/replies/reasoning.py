"""Set a reply's reasoning aside before anything parses its answer.

Real endpoints deliver reasoning in several places: a `reasoning_content` (or `reasoning`) field when
the server runs a reasoning parser, a leading `<think>…</think>` block when it does not, only the
closing `</think>` when the chat template opened the block inside the prompt (DeepSeek-R1, QwQ,
Qwen3-Thinking), or an opened block that never closes. Other families name the block differently:
Gemini's `<thought>`, ByteDance Seed-OSS's `<seed:think>`, Kimi's `◁think▷…◁/think▷`; Mistral's
Magistral sends `thinking` parts inside a list `content`; gpt-oss served without its special tokens
writes `analysis…assistantfinal…`. Reasoning often contains braces, fences and
draft answers, so it must never be searched for the answer, with one deliberate exception: when the
reasoning never closed (or the answer field is empty), a model that answered anyway wrote its
answer at the very end, so `tail` names the text whose *ending* may be the answer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

REASONING_FIELDS = ("reasoning_content", "reasoning", "thinking", "reasoning_details")
_TAG_NAMES = "think|thinking|reasoning|thought|seed:think"
_KIMI = (("◁think▷", "<think>"), ("◁/think▷", "</think>"))
# Parts of a list `content` that hold reasoning, not answer (Magistral, Anthropic-style gateways).
_REASONING_PART_TYPES = frozenset({"thinking", "reasoning", "redacted_thinking"})
# End-of-turn special tokens a server leaves in the text when it does not skip special tokens
# (ChatML, Llama 3 incl. `<|eom_id|>` after a tool call, Llama 4, Mistral/Llama 2, Gemma, gpt-oss,
# DeepSeek, GLM's `<|observation|>`, Command-R, Seed-OSS). Never part of an answer.
END_TOKENS = ("<|im_end|>", "<|eot_id|>", "<|eom_id|>", "<|eot|>", "<|eom|>", "<|end_of_text|>", "<|endoftext|>",
              "<|end|>", "<|return|>", "<|call|>", "</s>", "<end_of_turn>", "<eos>", "<｜end▁of▁sentence｜>",
              "<|observation|>", "<|END_OF_TURN_TOKEN|>", "<seed:eos>")
# gpt-oss harmony whose special tokens were stripped by the server: "analysis<reasoning>assistantfinal<answer>".
_HARMONY_BARE = re.compile(r"\A\s*analysis(?P<reasoning>.*?)assistantfinal(?P<answer>.*)\Z", re.DOTALL)
# A whole answer wrapped in <answer>…</answer> (R1-style "<think>…</think><answer>…</answer>" prompting).
_ANSWER_TAG = re.compile(r"\A\s*<answer>\s*(?P<answer>.*?)\s*</answer>\s*\Z", re.DOTALL | re.IGNORECASE)
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


def without_end_tokens(text: str) -> str:
    """`text` without the end-of-turn special tokens a server left at its end (indentation kept), and
    the whitespace around them. Peeled off the end in a loop: a regex anchored at the end (`\\s*…\\Z`)
    is tried at every position, which made a reply of 20,000 spaces cost 0.4 s."""
    tail = text.rstrip()
    peeled = False
    while (token := next((t for t in END_TOKENS if tail.endswith(t)), None)) is not None:
        tail, peeled = tail[:-len(token)].rstrip(), True
    return tail if peeled else text


ZERO_WIDTH = "\u200b\u200c\u200d\u2060\ufeff"
# Blank space at the ends of a text: whitespace and the zero-width characters some servers and
# proxies leave around an answer (they would otherwise end up in SFT rows, invisible).
_EDGE = "".join(chr(c) for c in range(0x3001) if chr(c).isspace()) + ZERO_WIDTH


def clean_text(text: str) -> str:
    """Line endings to `\\n`, byte-order marks, trailing end-of-turn special tokens (`<|im_end|>`,
    `<|eot_id|>`, `</s>`, ...) and surrounding blank space, zero-width characters included, removed
    (zero-width characters inside the text are left: they may belong to it, e.g. joiners in a script)."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return without_end_tokens(text.replace("\ufeff", "").strip(_EDGE)).strip(_EDGE)


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
            elif (isinstance(part, dict) and isinstance(part.get("text"), str)
                  and part.get("type") not in _REASONING_PART_TYPES):
                parts.append(part["text"])
        return "".join(parts)
    return str(content)


def _part_text(value: Any) -> str:
    """The text of a reasoning part's payload: a string, a `{"text"}` object or a list of either."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return _part_text(value.get("text") or value.get("thinking") or value.get("content"))
    if isinstance(value, list):
        return "".join(_part_text(v) for v in value)
    return ""


def content_reasoning(content: Any) -> str | None:
    """Reasoning sent as parts of a list `content`: Magistral's `{"type": "thinking", "thinking":
    [{"type": "text", "text": …}]}`, Anthropic-style `{"type": "thinking", "thinking": "…"}`."""
    if not isinstance(content, list):
        return None
    found = [_part_text(p.get("thinking", p.get("text", p.get("content")))) for p in content
             if isinstance(p, dict) and p.get("type") in _REASONING_PART_TYPES]
    joined = "\n\n".join(clean_text(f) for f in found if f.strip())
    return joined or None


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
        if isinstance(value, str) and value.strip() and not any(clean_text(value) in f for f in found):
            # vLLM sends the same text as `reasoning` and `reasoning_content`; OpenRouter's
            # `reasoning_details` repeat its `reasoning` (and a normalised turn's `reasoning_content`)
            found.append(clean_text(value))
    return "\n\n".join(found) or None


def split_reasoning(content: Any, reasoning: str | None = None) -> SplitReply:
    """Separate the answer from the reasoning in `content` (plus an already separated `reasoning`)."""
    parts = [reasoning] if reasoning else []
    if (in_parts := content_reasoning(content)) is not None:
        parts.append(in_parts)
        reasoning = "\n\n".join(parts)
    text = clean_text(content_text(content))
    for foreign, ours in _KIMI:
        text = text.replace(foreign, ours)
    if "<|channel|>" in text:
        text, harmony_reasoning = harmony_final(text)
        parts += harmony_reasoning
    elif (bare := _HARMONY_BARE.match(text)) is not None:
        parts.append(bare.group("reasoning").strip())
        text = bare.group("answer").strip()
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
        inner = _open_before(text, orphan)
        if inner is not None:  # a whole block inside the answer (`<tool_call><think>…</think>{…}`)
            parts.append(text[inner.end():orphan.start()].strip())
            text = (text[:inner.start()] + text[orphan.end():]).strip()
        elif orphan is not None:  # the template opened the block in the prompt: only the close is here
            parts.append(text[:orphan.start()].strip())
            text = text[orphan.end():].strip()
    if not text and tail is None and reasoning:
        tail = reasoning  # a reasoning parser swallowed a reply that never closed its reasoning
    if (wrapped := _ANSWER_TAG.match(text)) is not None:
        text = wrapped.group("answer")
    joined = "\n\n".join(p for p in parts if p)
    return SplitReply(answer=text, reasoning=joined or None, tail=tail)


def _open_before(text: str, close: re.Match[str] | None) -> re.Match[str] | None:
    """The last opening tag of `close`'s kind before it, if the block opened inside the text."""
    if close is None:
        return None
    opens = list(re.finditer(rf"<{re.escape(close.group(1))}\s*>", text[:close.start()], re.IGNORECASE))
    return opens[-1] if opens else None


_ANY_MARKUP = re.compile(rf"</?({_TAG_NAMES})\s*>|◁/?think▷|<\|channel\|>|\A\s*analysis.*?assistantfinal", re.IGNORECASE | re.DOTALL)


def has_reasoning_markup(text: str) -> bool:
    """Whether `text` holds a reasoning block in any of the spellings above (for code fields, which
    keep their indentation and so are only split when there is something to split)."""
    return _ANY_MARKUP.search(text) is not None


def harmony_messages(text: str) -> list[tuple[str, str, str]]:
    """(channel, header, body) of each harmony message in `text`."""
    return [(m.group(1).lower(), m.group(2).strip(), m.group(3).strip()) for m in _HARMONY.finditer(text)]


def harmony_final(text: str) -> tuple[str, list[str]]:
    """The final channel's text (the answer) and the analysis channels' texts (reasoning)."""
    messages = harmony_messages(text)
    reasoning = [body for channel, _, body in messages if channel == "analysis"]
    finals = [body for channel, _, body in messages if channel == "final"]
    return (finals[-1] if finals else ""), reasoning
