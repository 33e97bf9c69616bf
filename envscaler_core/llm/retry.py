"""Retry policy: which failures are worth another attempt, and how long to wait before it.

Kept as pure functions over the `openai` SDK's exceptions so the policy is testable without HTTP and
the gateway's loop stays short. The SDK's own retries are disabled (`max_retries=0`); this module is
the only place that decides.
"""

from __future__ import annotations

import html
import json
import random
import re
from dataclasses import dataclass
from typing import Any, Awaitable, TypeVar

import openai

from envscaler_core.llm.context_wordings import CONTEXT_PATTERN, CONTEXT_WORDS
from envscaler_core.llm.errors import CHAT_ENDPOINT, LLMNoAnswer, LLMPromptRefused, LLMRequestRejected, LLMUnavailableError, Via
from envscaler_core.llm.exchange import by_index
from envscaler_core.llm.retry_delays import (  # noqa: F401 - parse_duration, parse_retry_after: re-exported
    body_retry_delay, parse_duration, parse_retry_after, rate_limit_reset)
from envscaler_core.llm.server_refusals import server_refusal

T = TypeVar("T")

NEVER_RETRY = frozenset({400, 401, 403, 404, 422, 501})  # 501 Not Implemented: the server lacks the feature
GENERATION_FAILED = frozenset({"json_validate_failed", "tool_use_failed"})
"""Groq's 400 codes for a generation its own validator refused: the request was right, the sampled
answer was not, so asking again is what a person would do (when `failed_generation` holds nothing
usable; exchange.failed_generation reads it otherwise)."""


@dataclass(frozen=True)
class Failure:
    """One failed HTTP attempt, classified."""

    retryable: bool
    status: int | None  # None for transport failures (timeout, refused connection)
    detail: str  # short, one line
    retry_after_s: float | None = None
    no_answer: bool = False  # a 200 with no usable completion (BadAnswer): the endpoint is up
    kind: str | None = None  # "prompt" (context, filter), "quota" (the account), "server" (`server_refusals`)
    text: str | None = None  # the server's own words, when it gave any (one line)


def _one_line(text: str, limit: int = 200) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


class ErrorInBody(openai.OpenAIError):
    """An HTTP 200 whose body is `{"error": {...}}` instead of a completion: OpenRouter and several
    proxies relay an upstream provider's failure this way. It is the failure its `code` says (an
    upstream 5xx or 429 is worth another attempt; without a code it is treated as transient)."""

    def __init__(self, error: Any, mid_generation: bool = False, usage: Any = None) -> None:
        self.mid_generation = mid_generation  # a choice that ended in an error: the request was accepted
        self.usage = usage  # what the provider billed for it, when the body says (OpenRouter does)
        detail = error if isinstance(error, dict) else {"message": error}
        code = detail.get("code", detail.get("status"))
        self.status_code = int(code) if isinstance(code, int | str) and str(code).isdigit() else None
        self.detail = _one_line(_message_of(detail) or str(detail))
        self.error = detail
        super().__init__(f"HTTP 200 carrying an error{'' if self.status_code is None else f' {self.status_code}'}: "
                         f"{self.detail}")


class BadAnswer(openai.OpenAIError):
    """An HTTP 200 whose body is no usable chat completion: `choices: []`, an HTML page (a CDN's
    challenge or error page), an empty or truncated body, an event stream cut off before its end.
    The request was fine and the next attempt usually is too, so it is retried like a 5xx (bounded
    by `llm.max_retries`); before, one such answer stopped the whole run on the first try."""

    def __init__(self, detail: str, usage: Any = None) -> None:
        self.detail = _one_line(detail)
        self.usage = usage  # what the provider billed for it, when the body says
        super().__init__(f"HTTP 200 with {self.detail}")


async def completion_or_error(pending: Awaitable[T], error_finish_fails: bool = True) -> T:
    """The completion; ErrorInBody when the endpoint answered 200 with an error object and no choices,
    BadAnswer when it answered with no choice at all (`choices: []`, missing, or not objects).
    `error_finish_fails=False` (a reply read as it came, `chat(as_sent=True)`): a choice that finished
    with "error" is an answer too, as BFCL's handlers read it."""
    resp = await answer_or_error(pending, "choices", error_finish_fails)
    choices = resp.get("choices") if isinstance(resp, dict) else getattr(resp, "choices", None)
    if not isinstance(choices, list) or not any(isinstance(c, dict) or hasattr(c, "message") for c in choices):
        raise BadAnswer("no choices" if not choices else "choices that are not objects",
                        resp.get("usage") if isinstance(resp, dict) else getattr(resp, "usage", None))
    return resp


async def answer_or_error(pending: Awaitable[T], field: str, error_finish_fails: bool = True) -> T:
    """The answer, or ErrorInBody when the endpoint answered 200 with an error instead of `field`: as
    `{"error": {...}}` (OpenAI's shape, relayed by proxies) or as a top-level `{"object": "error", ...}`
    (vLLM's and SGLang's shape)."""
    resp = await pending
    if isinstance(resp, dict):  # a body the gateway parsed itself
        body: dict[str, Any] = resp
    elif getattr(resp, field, None):
        return resp
    else:
        body = {**(getattr(resp, "model_extra", None) or {}), "object": getattr(resp, "object", None)}
    if not body.get(field):
        if body.get("error") is not None:
            raise ErrorInBody(body["error"], usage=body.get("usage"))
        if body.get("object") == "error":
            raise ErrorInBody({k: v for k, v in body.items() if k != "object"}, usage=body.get("usage"))
    elif field == "choices" and error_finish_fails:
        first = by_index(body[field])[0] if isinstance(body[field], list) and body[field] else None  # the answer's
        if isinstance(first, dict) and (first.get("finish_reason") == "error" or isinstance(first.get("error"), dict)):
            # OpenRouter: an upstream failure mid-generation is a 200 whose choice ends in "error" (its
            # message may hold a partial or empty turn): the failure its code says, never an answer
            raise ErrorInBody(first.get("error") or {"message": "the choice finished with an error"}, mid_generation=True,
                              usage=body.get("usage"))
    return resp


TRANSIENT = frozenset({408, 409, 425, 429, 499})
"""4xx statuses about the moment, not the request: timeout, conflict, 425 Too Early (a TLS early-data
request the server will take when repeated), rate limit, nginx's 499 (the connection closed before the
upstream answered, relayed by some gateways)."""


def _retryable_status(status: int) -> bool:
    return status not in NEVER_RETRY and (status in TRANSIENT or status >= 500)


def classify(exc: BaseException) -> Failure | None:
    """Map an SDK exception to a Failure; None means 'not an HTTP failure' (let it propagate)."""
    if isinstance(exc, AttemptTimeout):
        return Failure(True, None, str(exc))
    if isinstance(exc, BadAnswer):
        return Failure(True, None, _one_line(str(exc)), no_answer=True)
    if isinstance(exc, ErrorInBody):
        status = exc.status_code
        kind = None if exc.mid_generation else refusal_kind(status, exc.error, exc.detail)
        retryable = kind is None and (status is None or exc.mid_generation or _retryable_status(status))
        return Failure(retryable, status, _one_line(str(exc)), body_retry_delay(exc.error), kind=kind,
                       text=exc.detail)
    if isinstance(exc, openai.APITimeoutError):
        return Failure(True, None, "request timed out")
    if isinstance(exc, openai.APIConnectionError):
        cause = exc.__cause__ or exc.__context__
        return Failure(True, None, _one_line(f"connection failed: {cause or exc}"))
    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        text = provider_text(exc)
        kind = refusal_kind(status, exc.body, text)
        retryable = kind is None and (
            _retryable_status(status) or (status == 400 and getattr(exc, "code", None) in GENERATION_FAILED))
        headers = exc.response.headers if exc.response is not None else None
        wait = parse_retry_after(headers)
        if wait is None:  # no Retry-After: what the body says (Gemini's RetryInfo, "Please retry in 19.6s.")
            wait = body_retry_delay(exc.body if exc.body is not None else _response_text(exc))
        if wait is None and status == 429:  # nor a stated delay: when the exhausted limit resets
            wait = rate_limit_reset(headers)
        return Failure(retryable, status, _one_line(f"HTTP {status}: {text}" if text else f"HTTP {status}"),
                       wait, kind=kind, text=text or None)
    return None


class AttemptTimeout(openai.OpenAIError):
    """One attempt had no complete answer within `llm.timeout_s`, however the server kept the connection
    busy (a body trickled a byte at a time resets the SDK's per-read timeout forever): retried like a timeout."""

    def __init__(self, timeout_s: float) -> None:
        super().__init__(f"request timed out (no complete answer within llm.timeout_s = {timeout_s:g} s)")


# ---- what the server said, and what it is about ---------------------------------------------------

_TITLE = re.compile(r"<title[^>]*>(.*?)</title>", re.IGNORECASE | re.DOTALL)
_HIDDEN = re.compile(r"<(script|style|head)\b[^>]*>.*?</\1\s*>|<!--.*?-->", re.IGNORECASE | re.DOTALL)
_TAG = re.compile(r"<[^>]+>")


def _page_text(text: str) -> str:
    """An HTML error page as a few words: its title, else its first text."""
    found = _TITLE.search(text)
    if found and found.group(1).strip():
        return _one_line(html.unescape(_TAG.sub(" ", found.group(1))), 120)
    return _one_line(html.unescape(_TAG.sub(" ", _HIDDEN.sub(" ", text))), 120)


def _message_of(body: Any) -> str:
    """The explanation in an error body, in the shapes servers use: OpenAI's error object (the SDK has
    already taken it out of `{"error": ...}`), a bare string (`{"error": "..."}`: LM Studio, Ollama), vLLM's
    top-level `message`, FastAPI's `detail`, Gemini's list of error objects, an HTML or text page."""
    if isinstance(body, str):
        text = body.strip()
        return _page_text(text) if text.startswith("<") or "<html" in text[:200].lower() else _one_line(text)
    if isinstance(body, list):
        found = [_message_of(item.get("error")) for item in body if isinstance(item, dict) and item.get("error")]
        return "; ".join(text for text in found if text)
    if isinstance(body, dict):
        relayed = _relayed_text(body)
        for key in ("message", "error", "detail", "msg"):
            value = body.get(key)
            if isinstance(value, str) and value.strip():
                text = _message_of(value)
                return f"{text} ({relayed})" if relayed and relayed not in text else text
            if isinstance(value, dict | list) and (inner := _message_of(value)):
                return inner
        return relayed
    return ""


def _relayed(body: Any) -> Any:
    """The upstream provider's own error body that a relay wrapped in its error: OpenRouter's
    `error.metadata.raw` (the provider's JSON body as a string, or its text), None when there is none."""
    metadata = body.get("metadata") if isinstance(body, dict) else None
    raw = metadata.get("raw") if isinstance(metadata, dict) else None
    if isinstance(raw, str):
        try:
            return json.loads(raw) if raw.strip()[:1] in ("{", "[") else raw
        except (ValueError, RecursionError):
            return raw
    return raw if isinstance(raw, dict | list) else None


def _relayed_text(body: dict[str, Any]) -> str:
    """The wrapped provider's words, named after it when the relay says which it was."""
    inner = _relayed(body)
    text = _message_of(inner) if inner is not None else ""
    provider = body["metadata"].get("provider_name") if text else None
    return f"{provider}: {text}" if isinstance(provider, str) and provider else text


def _response_text(exc: openai.APIStatusError) -> str:
    """The raw error body as text ('' when it cannot be read any more)."""
    try:
        return exc.response.text if exc.response is not None else ""
    except Exception:  # noqa: BLE001 - a body already closed: nothing to read
        return ""


def provider_text(exc: openai.APIStatusError) -> str:
    """The server's own words for an HTTP error (one line), whatever the body's shape; the SDK's message
    keeps only OpenAI's shape (`Error code: 400` for the others)."""
    text = _message_of(exc.body)
    if not text and exc.response is not None:
        try:
            text = _message_of(exc.response.text)
        except Exception:  # a body that cannot be read any more: the status alone
            text = ""
    return text


def _codes(body: Any) -> str:
    """The machine-readable names an error body gives (code, type, status, param, Azure's inner code)."""
    if isinstance(body, list):
        return " ".join(_codes(item.get("error")) for item in body if isinstance(item, dict))
    if not isinstance(body, dict):
        return ""
    names = [str(body.get(k)) for k in ("code", "type", "status") if body.get(k) is not None]
    inner = body.get("innererror")
    if isinstance(inner, dict) and inner.get("code") is not None:
        names.append(str(inner["code"]))
    if isinstance(body.get("error"), dict):
        names.append(_codes(body["error"]))
    if isinstance(relayed := _relayed(body), dict | list):  # the wrapped provider's own codes
        names.append(_codes(relayed))
    return " ".join(names).lower()


PROMPT_CODES = ("context_length_exceeded", "string_above_max_length", "exceed_context_size", "content_filter",
                "content_policy_violation", "responsibleaipolicyviolation", "prompt_too_long", "input_too_long",
                "invalid_prompt", "data_inspection_failed", "datainspectionfailed", "sensitivecontentdetected",
                "contentfilter")
"""Names an error body gives a refusal of this prompt, matched inside its codes: OpenAI's, Azure's, Anthropic's,
llama.cpp's; DashScope's `data_inspection_failed` (its content inspection); Volcengine Ark's
`...SensitiveContentDetected`."""
PROMPT_NUMBERS = ("1261", "1301")
"""Numeric codes that mean it, matched whole: Zhipu's 1261 (prompt too long) and 1301 (unsafe or sensitive content)."""
PROMPT_WORDS = re.compile(
    r"context length|context window|context size|maximum context|too long for (?:the|this) model|prompt is too long|"
    r"input is too long|reduce the length of the (?:messages|prompt|input)|exceeds? the (?:available )?context|"
    r"too many (?:input|prompt) tokens|content management policy|content[ _]filter|prompt was blocked|"
    r"input token count .{0,40}exceeds|exceeds the maximum number of tokens|"
    r"`?inputs`? (?:must have less than \d+ tokens|tokens \+ `?max_new_tokens`? must be)|"
    r"flagged as potentially violating|your input was flagged|content exists risk|inappropriate content|"
    r"sensitive content|considered high risk|range of input length should be|exceeded model token limit|"
    r"tokens in the prompt cannot exceed|maximum prompt length is|request contains \d+ tokens|"
    r"不安全或敏感|敏感内容|prompt ?超长|" + CONTEXT_PATTERN, re.IGNORECASE)
"""The words of such a refusal, besides the above: DeepSeek's filter ("Content Exists Risk"), DashScope's
("Input data may contain inappropriate content.") and its context limit ("Range of input length should be
[1, 129024]"), Moonshot's ("considered high risk", "exceeded model token limit"), Zhipu's (1301: "...不安全或
敏感内容..."), Volcengine's ("sensitive content"), Cohere's ("too many tokens: total number of tokens in the
prompt cannot exceed 4081"), xAI's ("This model's maximum prompt length is 131072 but the request contains
140000 tokens."), and every self-hosted server's context-overflow wording (`context_wordings.CONTEXT_WORDINGS`,
one row per server and version: an outside check found these stopping the run as "the request itself is wrong")."""
QUOTA_CODES = ("insufficient_quota", "billing_hard_limit_reached", "billing_not_active", "insufficient_balance",
               "insufficient_credits", "payment_required")
QUOTA_WORDS = re.compile(r"insufficient (?:balance|credits?|funds|quota)|(?:more|out of) credits|no credits (?:left|remain)|"
                         r"credit balance (?:is )?too low|out of (?:call volume )?quota|billing hard limit|payment required",
                         re.IGNORECASE)


def refusal_kind(status: int | None, body: Any, text: str) -> str | None:
    """What a refusal is about, when it is about something else than the request's form:
    "prompt": this one prompt (over the model's context or a provider's string limit, a prompt/content
    filter; HTTP 400/413/422 saying so, or any 413); "quota": the account (402 Payment Required, a 429 or 403
    whose code or words are about quota, credit or billing, e.g. OpenAI's `insufficient_quota`: no retry
    helps). A rate limit that only mentions a quota (Gemini's per-minute "exceeded your current quota")
    stays a rate limit. A 5xx in a self-hosted server's context wording (llama.cpp's "context shift is disabled")
is "prompt" too. "server": the server cannot serve the request's form as it runs, in any status
    (`server_refusals`: no retry changes it)."""
    codes = _codes(body)
    prompt = (any(c in codes for c in PROMPT_CODES) or any(n in codes.split() for n in PROMPT_NUMBERS)
              or bool(PROMPT_WORDS.search(text)))
    if status == 413 or (status in (400, 403, 422) and prompt):  # 403: OpenRouter's moderation refusal
        return "prompt"
    if status is not None and status >= 500 and CONTEXT_WORDS.search(text):  # llama.cpp's 500 "context shift is disabled"
        return "prompt"
    if status == 402 or (status in (400, 403, 429) and (any(c in codes for c in QUOTA_CODES) or QUOTA_WORDS.search(text))):
        return "quota"
    if status != 429 and server_refusal(text) is not None:  # llama.cpp's 500 "tools param requires --jinja flag"
        return "server"
    return None


def unsupported_parameter(text: str | None, name: str) -> bool:
    """A 400 that says the parameter `name` is not accepted (OpenAI/Azure reasoning models: "Unsupported
    parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead."; servers
    that only know one of the two: "unrecognized/unknown/extra ... max_completion_tokens")."""
    if not text or name not in text:
        return False
    low = text.lower()
    return bool(re.search(r"unsupported|not supported|unrecognized|unknown|not permitted|not allowed|extra "
                          r"(?:inputs|fields)|use '?max_(?:completion_)?tokens'? instead", low))


def backoff_delay(attempt: int, base_s: float, max_s: float, retry_after_s: float | None,
                  rng: random.Random | None = None) -> float:
    """Delay before retry number `attempt` (0-based): the server's Retry-After when given, else
    exponential backoff with full jitter; both capped at `max_s`."""
    if retry_after_s is not None:
        return min(retry_after_s, max_s)
    ceiling = min(max_s, base_s * (2 ** attempt))
    return (rng or random).uniform(0.0, ceiling)


def give_up(endpoint: str, failure: Failure, attempts: int, what: str, via: Via = CHAT_ENDPOINT,
            model: str = "the model name") -> Exception:
    """The one-line error a call ends with when `failure` is final: rejected (never retried, with the
    likely fix, naming the settings `via` that point at this endpoint) or unavailable (retries exhausted,
    or the endpoint cannot be reached at all)."""
    if failure.kind == "quota":
        return LLMRequestRejected(
            f"LLM endpoint {endpoint} refused {what}: the account is out of quota or credit ({failure.detail}); "
            "add credit or raise the quota with the provider (or use another key / llm.base_url), then resume: "
            "retrying does not help", failure.status, failure.text)
    if failure.kind == "server" and (row := server_refusal(failure.text)) is not None:
        return LLMRequestRejected(
            f"LLM endpoint {endpoint} cannot serve {what} as the server runs now: it says \"{failure.text}\" "
            f"(HTTP {failure.status}); {row.advice}, then resume: retrying does not help", failure.status,
            failure.text)
    if failure.kind == "prompt":
        return LLMPromptRefused(
            f"LLM endpoint {endpoint} refused {what} itself ({failure.detail}); this item fails (its prompt is "
            "over the model's context or the provider's limit, or a filter blocked it), the run goes on",
            reason=f"the endpoint refused this prompt: {failure.detail}", status_code=failure.status,
            detail=failure.text)
    if not failure.retryable:
        hint = {401: f"check {via.key}", 403: f"check the key's permissions ({via.key})",
                404: f"check {via.url} and {model}"}.get(
            failure.status or 0, "the request itself is wrong; it was not retried")
        return LLMRequestRejected(f"LLM endpoint {endpoint} rejected {what} ({failure.detail}); {hint}",
                                  failure.status, failure.text)
    if failure.no_answer:  # answered, every time, with nothing usable: this request's failure, not an outage
        return LLMNoAnswer(
            f"LLM endpoint {endpoint} answered {what} {attempts} time(s) without a usable completion (last: "
            f"{failure.detail}); this item fails (a filter or proxy that blocks one payload does this), the run "
            "goes on", reason=f"no usable completion: {failure.detail}")
    if failure.status is None and failure.detail.startswith("connection failed"):
        return LLMUnavailableError(
            f"cannot reach LLM endpoint {endpoint} after {attempts} attempt(s) ({failure.detail}); "
            f"start the server or set {via.url} (e.g. `envscaler mock-llm --port 8000`)"
        )
    return LLMUnavailableError(
        f"LLM endpoint {endpoint} kept failing for {what} after {attempts} attempt(s) "
        f"(last: {failure.detail}); retry later or raise llm.max_retries / llm.timeout_s"
    )
