"""What one HTTP chat completion gives back, read the same way for every endpoint.

Endpoints differ in what they omit: `usage` (many local servers, some proxies), `finish_reason`, or
`content`. `Exchange` carries the raw assistant message (everything the server sent, for the audit
log and the cache), the token counts (estimated at ~4 characters per token when `usage` is missing,
and flagged so accounting can say so), and `finish_reason`, so a reply cut off by the output limit
("length") is never taken for a complete one. `cached_tokens` is how many of the prompt tokens the
provider served from its prefix cache (billed at the cached-input rate), read from every spelling
providers use: OpenAI's `prompt_tokens_details.cached_tokens` (also xAI, Mistral, vLLM, SGLang,
Azure), the Responses API's `input_tokens_details.cached_tokens`, DeepSeek's `prompt_cache_hit_tokens`,
a top-level `cached_tokens` (Moonshot) and Anthropic's `cache_read_input_tokens` (through proxies).
Anthropic's usage relayed as is has no `prompt_tokens`: its prompt is `input_tokens` (the uncached
part) plus the cache reads and writes (`prompt_token_count`). Counts sent as numeric strings count.
The answer is the first choice by `index` that says something, under `message`, `delta` or the legacy `text`.

A cut-off reply is retried with more room: the output limit doubles from what the cut-off reply
used (at least `MIN_ROOM`), up to `llm.max_output_tokens`, at most `MAX_LENGTH_RETRIES` times.
"""

from __future__ import annotations

import ipaddress
import json
import math
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlparse

from envscaler_core.llm.errors import LLMConfigError
from envscaler_core.llm.finish_reasons import finish_kind
from envscaler_core.llm.replies import REASONING_FIELDS, content_text, normalise_assistant
from envscaler_core.llm.sse_body import completion_from_sse, looks_like_sse

MAX_LENGTH_RETRIES = 2
MIN_ROOM = 1024
CHARS_PER_TOKEN = 4


@dataclass
class Exchange:
    message: dict[str, Any]
    prompt_tokens: int
    completion_tokens: int
    estimated_tokens: int  # how many of the two counts above are estimates (0 = the endpoint reported them)
    finish_reason: str | None
    cached_tokens: int = 0  # of prompt_tokens, how many the provider's prefix cache served (never estimated)
    refused_room: str | None = None  # why asking again with more room was not possible (the server's words)
    received: dict[str, Any] | None = None  # the answer choice's message exactly as it came (nulls kept)

    @property
    def truncated(self) -> bool:
        """Cut off by the output limit: worth asking again with more room."""
        return finish_kind(self.finish_reason) == "cut_off"  # Gemini spells it MAX_TOKENS

    @property
    def unfinished(self) -> bool:
        """Stopped by the server before it finished (`abort`, an unknown word, ...; see finish_reasons): ask again."""
        return finish_kind(self.finish_reason) == "unfinished"

    @property
    def filtered(self) -> bool:
        return finish_kind(self.finish_reason) == "filtered"

    @property
    def incomplete(self) -> bool:
        """Cut off for any reason (output limit, a stop by the server, content filter): never to be
        parsed as an answer."""
        return self.truncated or self.unfinished or self.filtered

    @property
    def usage(self) -> dict[str, int]:
        usage = {"prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens}
        return {**usage, "cached_tokens": self.cached_tokens} if self.cached_tokens else usage


def estimate_tokens(chars: int) -> int:
    return max(1, math.ceil(chars / CHARS_PER_TOKEN)) if chars else 0


def _chars(value: Any) -> int:
    if value is None:
        return 0
    if isinstance(value, str):
        return len(value)
    return len(json.dumps(value, default=str))


def prompt_chars(messages: list[dict[str, Any]], tools: Any) -> int:
    return sum(_chars(m.get("content")) + _chars(m.get("tool_calls")) for m in messages) + _chars(tools)


def completion_chars(message: dict[str, Any]) -> int:
    return (_chars(message.get("content")) + _chars(message.get("tool_calls"))
            + sum(_chars(message.get(k)) for k in REASONING_FIELDS))


OPAQUE_STATE = ("reasoning_details", "extra_content")
"""Provider state that goes back exactly as it came (OpenRouter's reasoning, Gemini's call-level thought
signatures): the provider checks it, so even its nulls (`"signature": null`) are kept."""


def _without_none(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: (v if k in OPAQUE_STATE else _without_none(v)) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_none(v) for v in value]
    return value


def assistant_message(message: Any) -> dict[str, Any]:
    """The message as a plain dict with everything the server sent (extra fields included, nulls
    dropped except inside `OPAQUE_STATE`); `content` always present. Serializer warnings are off:
    servers send arguments as objects."""
    if hasattr(message, "model_dump"):
        data = _without_none(message.model_dump(warnings=False))
    else:
        data = _without_none(dict(message or {}))
    data["role"] = "assistant"
    data.setdefault("content", None)
    return data


def request_body(model: str, messages: list[dict[str, Any]], extra: dict[str, Any]) -> bytes:
    """The request body, serialised once by us. The SDK's `create()` first walks every message and
    tool definition against its TypedDicts (15-50 ms of CPU for ~30 tools, on the event loop);
    our messages and tools are already plain JSON, so that walk only costs."""
    try:
        return json.dumps({"model": model, "messages": messages, **extra}, ensure_ascii=False,
                          separators=(",", ":"), allow_nan=False).encode("utf-8")
    except (TypeError, ValueError) as exc:
        raise LLMConfigError(f"request for model {model} is not plain JSON ({exc}); messages and tools "
                             "must be JSON-serialisable dicts") from None


def parse_completion(raw: bytes) -> dict[str, Any]:
    """The response body as JSON, parsed once by us: the SDK's typed `construct` of a ChatCompletion
    costs ~5-8 ms of CPU per response for nothing we use. An event stream in the body (`data:` chunks,
    sent by proxies that stream whatever was asked) is put back together (`sse_body`). ValueError when
    it is neither a JSON object nor a complete stream (an HTML page, an empty or truncated body)."""
    if looks_like_sse(raw):
        return completion_from_sse(raw)
    if not raw.strip():
        raise ValueError("an empty body")
    try:
        data = json.loads(raw)
    except RecursionError:
        raise ValueError("the body nests JSON too deeply to read") from None
    if not isinstance(data, dict):
        raise ValueError(f"the body is a JSON {type(data).__name__}, not an object")
    if _SURROGATE_ESCAPE.search(raw):
        try:
            data = _without_lone_surrogates(data)
        except RecursionError:
            raise ValueError("the body nests JSON too deeply to read") from None
    return data


_SURROGATE_ESCAPE = re.compile(rb"\\[uU][dD][89a-fA-F]")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _without_lone_surrogates(value: Any) -> Any:
    """JSON text may escape half of a surrogate pair (`\\ud800`); Python keeps it as a character no
    store, wire or tokenizer accepts, so a model's text would fail far from here. Each becomes U+FFFD,
    as a UTF-8 decoder would make of it (valid pairs were already joined by the parser)."""
    if isinstance(value, str):
        return _LONE_SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [_without_lone_surrogates(v) for v in value]
    if isinstance(value, dict):
        return {_without_lone_surrogates(k): _without_lone_surrogates(v) for k, v in value.items()}
    return value


def choices_of(resp: Any) -> list[Any]:
    value = _field(resp, "choices")
    return value if isinstance(value, list) else []


def choice_message(choice: Any) -> Any:
    """A choice's assistant message wherever the endpoint put it: `message`; `delta` (a stream chunk's
    shape, sent by proxies that relay a chunk as the completion); the legacy completions API's `text`."""
    for key in ("message", "delta"):
        value = _field(choice, key)
        if value is not None:
            return value
    text = _field(choice, "text")
    return {"role": "assistant", "content": text} if isinstance(text, str) else None


def _says_something(message: Any) -> bool:
    if not isinstance(message, dict):
        message = assistant_message(message)
    return bool(content_text(message.get("content")).strip() or message.get("tool_calls")
                or message.get("function_call") or message.get("refusal")
                or any(message.get(k) for k in REASONING_FIELDS))


def by_index(choices: list[Any]) -> list[Any]:
    """Choices in the order of their `index` (0 is the answer), not of the list: a server or proxy may
    list them in any order (one sent index 1, cut off, before index 0). A choice without an index keeps
    its place in the list."""
    def key(item: tuple[int, Any]) -> int:
        index = _field(item[1], "index")
        return index if isinstance(index, int) and not isinstance(index, bool) else item[0]

    return [c for _, c in sorted(enumerate(choices), key=key)]


def answer_choice(resp: Any, *, first_listed: bool = False) -> Any:
    """The choice that holds the answer: by `index`, the first that says something (servers asked for
    one choice sometimes send several, the first of them empty), else index 0. `first_listed`: the
    list's first choice, whatever it holds, as BFCL's handlers read `choices[0]` (rt17-D F1: an eval that
    picked the choice that said something scored 1.0 where BFCL scores 0)."""
    choices = [c for c in choices_of(resp) if isinstance(c, dict) or hasattr(c, "model_fields")]
    if first_listed:
        return choices[0]
    choices = by_index(choices)
    return next((c for c in choices if _says_something(choice_message(c) or {})), choices[0])


def read_response(resp: Any, messages: list[dict[str, Any]], tools: Any, *, first_listed: bool = False) -> Exchange:
    """One chat completion response (a parsed JSON body or an SDK object) as an Exchange (its answer choice,
    `answer_choice`'s).
    A count of 0 for a side that is not empty (an all-zero `usage` on a real reply: a proxy that fills the
    field in) is read as missing, so it is estimated and marked; a `total_tokens` above prompt + completion
    counts the difference as output (Gemini's thinking tokens are in the total only)."""
    choice = answer_choice(resp, first_listed=first_listed)
    raw = choice_message(choice)
    message = assistant_message(raw)
    usage = _field(resp, "usage")
    prompt, completion = reported_tokens(usage)
    estimated = 0
    if prompt is None or (prompt == 0 and prompt_chars(messages, tools)):
        prompt = estimate_tokens(prompt_chars(messages, tools))
        estimated += prompt
    if completion is None or (completion == 0 and completion_chars(message)):
        completion = estimate_tokens(completion_chars(message))
        estimated += completion
    cached = min(cached_prompt_tokens(usage), int(prompt)) if prompt else 0
    return Exchange(message, int(prompt), int(completion), estimated, _field(choice, "finish_reason"), cached,
                    received=dict(raw) if isinstance(raw, dict) else None)


def reported_tokens(usage: Any) -> tuple[int | None, int | None]:
    """(prompt, completion) as the endpoint reported them (None where it did not). Output tokens that only
    `total_tokens` holds (above prompt + completion: Gemini's OpenAI layer leaves its thinking tokens out
    of `completion_tokens`) are billed as output, so they count as completion. A prompt count below the
    cached count is the uncached part only: the cached tokens are added to it (before, the difference was
    lost: an outside check's run recorded 40% of the prompt tokens delivered)."""
    prompt = prompt_token_count(usage)
    completion = _count(usage, "completion_tokens", "output_tokens")
    total = _count(usage, "total_tokens")
    if total is not None and completion and not prompt and total > completion:
        prompt = total - completion  # a prompt count left out (or 0) is the rest of the total, exactly
    cached = cached_prompt_tokens(usage)
    if prompt is not None and cached > prompt:
        # cached tokens are part of the prompt: more of them than prompt tokens means `prompt_tokens` holds
        # only the uncached part (Anthropic's meaning under OpenAI's names, as older LiteLLM relays send it)
        prompt += cached
    if prompt and completion is not None and total is not None and total > prompt + completion:
        completion = total - prompt
    return prompt, completion


def billed_usage(usage: Any) -> tuple[int, int, int] | None:
    """(prompt, completion, cached) that a reply the gateway refuses still reports (a 200 whose choice
    ended in "error", an error body with `usage`): the provider bills them. None when it reports nothing."""
    prompt, completion = reported_tokens(usage)
    if not prompt and not completion:
        return None
    prompt = prompt or 0
    return prompt, completion or 0, min(cached_prompt_tokens(usage), prompt)


MAX_TOKEN_COUNT = 100_000_000
"""Above any model's context: a larger (or negative) count is a broken proxy's, not a measurement. It is
read as missing, so the tokens are estimated and marked so, instead of a negative total or a value the
store's columns cannot hold (an outside check's 3e9 left a run's audit rows uncommittable)."""


def _number(value: Any) -> int | None:
    """A token count as sent: a number, or a numeric string (some proxies send `"prompt_tokens": "123"`);
    None when absent, not a count, or outside 0..MAX_TOKEN_COUNT."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            return None
    if not isinstance(value, int | float) or not math.isfinite(value) or not 0 <= value <= MAX_TOKEN_COUNT:
        return None
    return int(value)


def _count(usage: Any, *names: str) -> int | None:
    """A token count under its OpenAI name or the name some proxies use; None when absent."""
    for name in names:
        value = _number(_field(usage, name))
        if value is not None:
            return value
    return None


_ANTHROPIC_CACHE = ("cache_read_input_tokens", "cache_creation_input_tokens")


def prompt_token_count(usage: Any) -> int | None:
    """Prompt tokens: OpenAI's `prompt_tokens`; else `input_tokens`, to which Anthropic's usage (sent
    as is by some compatibility layers) adds `cache_read_input_tokens` and `cache_creation_input_tokens`,
    since its `input_tokens` counts only the uncached part (the Responses API, which spells it the
    same, has no such fields and counts cached tokens inside `input_tokens`)."""
    named = _count(usage, "prompt_tokens")
    anthropic = _count(usage, "input_tokens")
    if anthropic is not None:
        anthropic += sum(_count(usage, name) or 0 for name in _ANTHROPIC_CACHE)
    if named is None or anthropic is None:
        return named if anthropic is None else anthropic
    # both spellings (a relay passing Anthropic's fields beside OpenAI's names): the larger is the one
    # that counts the cached part; a `prompt_tokens` holding only the uncached part booked the cache
    # reads as output through `total_tokens`
    return max(named, anthropic)


_CACHED_DETAILS = ("prompt_tokens_details", "input_tokens_details")
_CACHED_FLAT = ("prompt_cache_hit_tokens", "cached_tokens", "cache_read_input_tokens")


def _field(obj: Any, name: str) -> Any:
    """`name` of an SDK model (declared field or extra) or of a plain dict; None when absent."""
    if obj is None:
        return None
    if isinstance(obj, dict):
        return obj.get(name)
    if name in getattr(type(obj), "model_fields", {}):
        return getattr(obj, name, None)
    return (getattr(obj, "model_extra", None) or {}).get(name)


def cached_prompt_tokens(usage: Any) -> int:
    """Prompt tokens the provider served from its prefix cache; 0 when the endpoint says nothing (a
    missing count is never estimated: only the provider knows what its cache held)."""
    for details in _CACHED_DETAILS:
        value = _number(_field(_field(usage, details), "cached_tokens"))
        if value is not None and value > 0:
            return value
    for name in _CACHED_FLAT:
        value = _number(_field(usage, name))
        if value is not None and value > 0:
            return value
    return 0


SENT_BACK = ("reasoning_details",)
"""Reasoning a provider needs back with the turn: OpenRouter's `reasoning_details` carry encrypted reasoning
and Gemini's thought signatures (a tool-call turn sent back without them is refused with HTTP 400
"Function call is missing a thought_signature"), as `extra_content` does on a Gemini call sent directly."""


def outgoing(messages: list[dict[str, Any]], keep_reasoning: bool = False) -> list[dict[str, Any]]:
    """Messages as sent: earlier turns' reasoning stays in the trajectory but is not sent back (several
    servers reject `reasoning_content` in requests, and reasoning is not meant to be re-read), except the
    opaque state a provider needs back (`SENT_BACK`).
    `keep_reasoning`: for an endpoint that refused a history without it (`needs_reasoning_back`), each
    assistant turn with tool calls carries its `reasoning_content` (a single space when the turn had none:
    servers that test the field for truth, and relays that drop empty strings, take "" for missing)."""
    out = []
    for m in messages:
        if m.get("role") != "assistant":
            out.append(m)
            continue
        kept = {k: v for k, v in m.items() if k not in REASONING_FIELDS or k in SENT_BACK}
        if keep_reasoning and m.get("tool_calls"):
            reasoning = m.get("reasoning_content")
            kept["reasoning_content"] = reasoning if isinstance(reasoning, str) and reasoning.strip() else " "
        out.append(kept)
    return out


_REASONING_FIELD = re.compile(r"reasoning[_ ]content", re.IGNORECASE)
_ASKED_BACK = re.compile(
    r"missing|required|requires?|must|needs? to|should|pass(?:ed)? back|sen[dt] back|give(?:n)? back|return(?:ed)? "
    r"back|include|provide|expected|lacks?|absent|not (?:found|present|set|provided|included)|omitted|empty",
    re.IGNORECASE)
_REFUSED_FIELD = re.compile(r"not (?:allowed|permitted|supported|accepted)|unsupported|unrecogni[sz]ed|unknown|"
                            r"unexpected|extra (?:inputs?|fields?)|forbidden|must not|should not|no longer|deprecated|"
                            r"not (?:required|expected|needed|necessary)|(?:must|should|to) be (?:omitted|removed|"
                            r"dropped|excluded|stripped)|(?:do not|don't|never) (?:send|include|pass)", re.IGNORECASE)
"""A 400 that refuses the field or says it is not wanted. An outside check: "reasoning_content is no longer
supported; it must be omitted from requests" and "... is not required and not expected for this model"
were read as asking for it (every later request carried it)."""


def needs_reasoning_back(exc: BaseException, messages: list[dict[str, Any]]) -> bool:
    """An HTTP 400 saying the history lacks the reasoning of an assistant turn with tool calls, in every
    wording servers use to ask for it back: DeepSeek V3.2's thinking mode ("Missing `reasoning_content`
    field in the assistant message at message index 2"), DeepSeek V4's ("The `reasoning_content` in the
    thinking mode must be passed back to the API."), Kimi K2 thinking ("thinking is enabled but
    reasoning_content is missing in assistant tool call message at index 7"), and the like (required,
    expected, should be included, not provided, empty). A 400 that refuses the field (not allowed,
    unsupported, unknown) is not one: the gateway never sends it unasked. Only when the history has such a
    turn to give it back for. Before, V4's wording stopped every run at the second turn of its first rollout."""
    if getattr(exc, "status_code", None) != 400 or not any(
            m.get("role") == "assistant" and m.get("tool_calls") for m in messages):
        return False
    body = getattr(exc, "body", None)
    text = f"{exc} {json.dumps(body, default=str, ensure_ascii=False) if body is not None else ''}"
    return bool(_REASONING_FIELD.search(text) and _ASKED_BACK.search(text) and not _REFUSED_FIELD.search(text))


def is_loopback(base_url: str | None) -> bool:
    """True for http(s)://127.x / localhost / ::1 endpoints (the mock, local servers): no key needed."""
    if not base_url:
        return False
    host = urlparse(base_url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def room_parameter(base_url: str | None) -> str:
    """The output-room parameter an endpoint is first asked with: OpenAI's own API and Azure OpenAI want
    `max_completion_tokens` (their reasoning models reject `max_tokens`); every other OpenAI-compatible
    server understands `max_tokens`. The gateway switches when an endpoint says otherwise (a 400 naming
    the parameter as unsupported) and keeps the one that worked."""
    host = urlparse(base_url or "https://api.openai.com/v1").hostname or ""
    return "max_completion_tokens" if host.endswith(("openai.com", "azure.com")) else "max_tokens"


ROOM_PARAMETERS = ("max_tokens", "max_completion_tokens")


def more_room(current: int | None, used: int, ceiling: int) -> int | None:
    """The next output limit after a cut-off reply, or None when it cannot grow any more."""
    base = current if current is not None else used
    grown = min(ceiling, max(2 * base, MIN_ROOM))
    if current is not None and grown <= current:
        return None
    return grown


def failed_generation(exc: BaseException, tools: Any = None) -> dict[str, Any] | None:
    """Groq (and servers copying it) answer a JSON-mode or tool-call reply their own validator refused
    with HTTP 400 `json_validate_failed` / `tool_use_failed` and the model's text in `failed_generation`.
    That text is the model's answer, which our readers may well accept (a fence, prose around the JSON,
    a `<tool_call>` block): it becomes an ordinary completion instead of a rejected request, so the run
    goes on and a reply that is really unusable gets a repair turn like any other."""
    body = getattr(exc, "body", None)
    if getattr(exc, "status_code", None) != 400 or not isinstance(body, dict):
        return None
    text = body.get("failed_generation")
    if not isinstance(text, str) or not text.strip():
        return None  # nothing to read: asked again (retry.GENERATION_FAILED)
    message = {"role": "assistant", "content": text}
    if body.get("code") == "tool_use_failed" and tools:
        if not normalise_assistant(message, tools).get("tool_calls"):
            return None  # a refused call we cannot read as one of the offered tools is not a final answer
    return {"choices": [{"index": 0, "finish_reason": "stop", "message": message}]}

