"""What a reply's `finish_reason` says about it, in every provider's word (any case).

Four kinds, each with its own handling: `finished` (the reply is the answer: parsed), `cut_off` (a limit
cut it: asked again with more room), `unfinished` (the server stopped before the reply was complete, for
a reason that is not the reply's: asked again as it was) and `filtered` (a filter, guardrail or refusal
stopped it: the same request meets the same stop, so the item fails with the server's word). Only the
`finished` kind is ever parsed. An outside check found Bedrock's `guardrail_intervened`, watsonx's
`not_finished`, Cohere's `TIMEOUT`, Gemini's `LANGUAGE`, Anthropic's `refusal` and others read as finished
replies (their half text exported as training data): every word below was sorted deliberately, and a word
in none of the lists is `unfinished` (asked again, then the item fails naming it), never parsed."""

from __future__ import annotations

from typing import Literal

FinishKind = Literal["finished", "cut_off", "unfinished", "filtered"]

FINISHED = ("stop", "tool_calls", "function_call", "end_turn", "tool_use", "stop_sequence", "complete",
            "tool_call", "eos", "eos_token", "end")
"""The reply is complete: OpenAI's `stop` / `tool_calls` / `function_call`; Anthropic's and Bedrock's
`end_turn` / `tool_use` / `stop_sequence`; Cohere's `COMPLETE` / `STOP_SEQUENCE` / `TOOL_CALL`; Gemini's
`STOP`; watsonx's and TGI's `eos_token` / `stop_sequence`. No finish_reason at all (many local servers
leave it out) is read as finished too: nothing says otherwise."""
CUT_OFF = ("length", "max_tokens", "max_output_tokens", "max_length", "model_length", "model_context_window_exceeded",
           "token_limit", "max_new_tokens", "error_limit", "truncated")
"""A reply cut off by a limit: OpenAI's `length`; Anthropic's and Gemini's `max_tokens` / `MAX_TOKENS`
relayed as is (also Cohere, Bedrock); the Responses API's `max_output_tokens`; `max_length`; Mistral's
`model_length` (the model's context filled up mid-reply); Anthropic's and Bedrock's
`model_context_window_exceeded`; watsonx's `token_limit`; `max_new_tokens` (Hugging Face generation
relayed); Cohere's `ERROR_LIMIT` (the context limit reached); `truncated`. What it holds is half an answer:
never parsed, asked again with more room. An outside check: Mistral's `model_length` was read as a
finished reply, its half arguments executed (`{"member_id": "M-`)."""
UNFINISHED = ("abort", "aborted", "cancelled", "canceled", "error", "malformed_function_call",
              "unexpected_tool_call", "too_many_tool_calls", "other", "finish_reason_unspecified", "not_finished",
              "time_limit", "timeout", "pause_turn", "incomplete", "user_cancel", "error_token")
"""The server stopped before the reply was complete, for a reason that is not the reply's: vLLM's and
SGLang's `abort`, `cancelled`, an `error` not caught earlier (OpenRouter's mid-generation failure is read
in `retry`), Gemini's `MALFORMED_FUNCTION_CALL` / `UNEXPECTED_TOOL_CALL` / `TOO_MANY_TOOL_CALLS` / `OTHER`
/ `FINISH_REASON_UNSPECIFIED`, watsonx's `not_finished` / `time_limit`, Cohere's `TIMEOUT` /
`USER_CANCEL`, Anthropic's `pause_turn` (a long server-side turn paused), the Responses API's
`incomplete`. Never parsed, asked again as it is (the same request, the same room)."""
FILTERED = ("content_filter", "content_filtered", "guardrail_intervened", "safety", "recitation", "blocklist",
            "prohibited_content", "spii", "image_safety", "image_prohibited_content", "image_recitation",
            "language", "refusal", "error_toxic")
"""A filter, guardrail or refusal stopped the reply: OpenAI's `content_filter`; Bedrock's
`guardrail_intervened` / `content_filtered`; Gemini's `SAFETY`, `RECITATION`, `BLOCKLIST`,
`PROHIBITED_CONTENT`, `SPII`, `IMAGE_*` and `LANGUAGE` (a language the model does not serve); Anthropic's
`refusal`; Cohere's `ERROR_TOXIC`. The same request meets the same stop, so it is not asked again as is."""

_KINDS: dict[str, FinishKind] = {**{w: "finished" for w in FINISHED}, **{w: "cut_off" for w in CUT_OFF},
                                 **{w: "unfinished" for w in UNFINISHED}, **{w: "filtered" for w in FILTERED}}


def finish_kind(reason: object) -> FinishKind:
    """The kind of a reply's finish_reason (None or '' = finished; an unknown word = unfinished)."""
    if reason is None or (isinstance(reason, str) and not reason.strip()):
        return "finished"
    return _KINDS.get(str(reason).strip().lower(), "unfinished")
