"""How self-hosted servers say a prompt is over the model's context, one row per server and version.

A refusal in these words is about this one prompt (the item fails, the run goes on), never about the
request's form. Kept as a table so each wording is tested against the text it came from; the patterns
allow numbers and parentheses between the words ("Input length (5123 tokens) exceeds the maximum"),
because servers put the figures there. Before, vLLM's "decoder prompt ... longer than the maximum model
length" and "Input length (N tokens) exceeds ..." stopped the whole run as "the request itself is wrong"
(an outside check). llama.cpp sends its two generation-time wordings (the prompt plus the reply reached the
context with context shift off) as HTTP 500: they were retried until the run stopped with "retry later" (an
outside check); any status carrying a wording of this table is now the prompt's refusal (`retry.refusal_kind`)."""

from __future__ import annotations

import re
from dataclasses import dataclass

_FIGURES = r"[\s\d(),:=a-z_`']{0,40}?"
"""What may stand between two words of a wording: numbers, parentheses, "tokens", "(length 5123)"."""


@dataclass(frozen=True)
class ContextWording:
    server: str  # the server and version the wording came from
    example: str  # its text, as that server sends it (figures vary)
    pattern: str  # a regular expression, matched case-insensitively anywhere in the server's message


CONTEXT_WORDINGS: tuple[ContextWording, ...] = (
    ContextWording("vLLM v1 (0.8+)", "The decoder prompt (length 5123) is longer than the maximum model length of "
                   "4096. Make sure that `max_model_len` is no smaller than the number of text tokens.",
                   rf"prompt{_FIGURES} is longer than the maximum model length"),
    ContextWording("vLLM v0 (0.4-0.6)", "Prompt length of 5123 is longer than the maximum model length of 4096.",
                   rf"prompt{_FIGURES} is longer than the maximum model length"),
    ContextWording("vLLM v1 (0.9+)", "The prompt (total length 5123) is too long to fit into the model (context "
                   "length 4096). Make sure that `max_model_len` is no smaller than the number of text tokens plus "
                   "multimodal tokens.", r"too long to fit into the model"),
    ContextWording("vLLM (OpenAI server, all versions)", "This model's maximum context length is 4096 tokens. However, "
                   "you requested 5123 tokens (5000 in the messages, 123 in the completion). Please reduce the length "
                   "of the messages or completion.", r"maximum context length"),
    ContextWording("SGLang (0.3-0.4)", "The input (5123 tokens) is longer than the model's context length (4096 "
                   "tokens).", rf"input{_FIGURES} is longer than the model'?s context length"),
    ContextWording("SGLang (newer)", "Input length (5123 tokens) exceeds the maximum allowed length (4096 tokens). Use "
                   "a shorter input or enable --allow-auto-truncate.",
                   rf"(?:input|prompt) length{_FIGURES} exceeds the maximum"),
    ContextWording("TGI (2.x)", "Input validation error: `inputs` must have less than 4096 tokens. Given: 5123",
                   r"`?inputs`? must have less than \d+ tokens"),
    ContextWording("TGI (2.x)", "Input validation error: `inputs` tokens + `max_new_tokens` must be <= 4096. Given: "
                   "5000 `inputs` tokens and 123 `max_new_tokens`", r"`?inputs`? tokens \+ `?max_new_tokens`? must be"),
    ContextWording("llama.cpp server (b4000+)", "the request exceeds the available context size, try increasing it",
                   r"exceeds? the (?:available )?context"),
    ContextWording("llama.cpp server (older; HTTP 500)", "Context size has been exceeded.",
                   r"context size has been exceeded"),
    ContextWording("llama.cpp server (2025 builds run with --no-context-shift; HTTP 500; later ones end the reply "
                   "with finish_reason length)", "context shift is disabled", r"context shift is disabled"),
    ContextWording("Ollama (0.3+)", "input length exceeds the context length",
                   rf"(?:input|prompt) length{_FIGURES} exceeds the (?:maximum|context)"),
    ContextWording("LM Studio (0.3)", "Trying to keep the first 5123 tokens when context the overflows. However, the "
                   "model is loaded with context length of only 4096 tokens, which is not enough.",
                   r"loaded with context length of only"),
    ContextWording("LiteLLM proxy (1.x)", "litellm.ContextWindowExceededError: litellm.BadRequestError: "
                   "ContextWindowExceededError: Input is too long for requested model.",
                   r"context ?window ?exceeded"),
)

CONTEXT_PATTERN = "|".join(f"(?:{row.pattern})" for row in CONTEXT_WORDINGS)
"""All the rows as one alternation, for `retry.PROMPT_WORDS`."""
CONTEXT_WORDS = re.compile(CONTEXT_PATTERN, re.IGNORECASE)
