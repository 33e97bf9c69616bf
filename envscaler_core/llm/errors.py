"""What can go wrong at the LLM boundary, split by what the caller should do about it.

- `LLMConfigError`: the factory is misconfigured (no key, bad model); fix settings, do not retry.
- `LLMUnavailableError`: the endpoint could not be reached or kept failing after every retry.
- `LLMRequestRejected`: the endpoint refused the request (400/401/403/404/422), or the account has no
  quota or credit left (402, 429 `insufficient_quota`); retrying is pointless, the run stops.
- `LLMPromptRefused`: the endpoint refused this one prompt (over the model's context, a prompt/content
  filter, a string over its maximum length): that item fails, the run goes on.
- `LLMOutputInvalid`: the model answered, but not in the required shape even after the bounded repair
  turns; stages record `.reason` and move on.
- `BudgetExceeded`: the run has spent its token/cost budget; the run must stop.

Every message is one line that names the endpoint or prompt, so the CLI can print it without a traceback.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Via:
    """The settings that name the endpoint a request went to, quoted in its errors' fixes: an embeddings
    request sent to `llm.embedding_base_url` was blamed on the chat endpoint's settings (an outside check:
    "cannot reach LLM endpoint <chat url> ...; set OPENAI_BASE_URL", a 401 "check OPENAI_API_KEY")."""

    url: str = "OPENAI_BASE_URL / llm.base_url"
    key: str = "OPENAI_API_KEY / llm.api_key"


CHAT_ENDPOINT = Via()


class LLMError(Exception):
    """Base of every gateway error."""


class LLMConfigError(LLMError):
    """Settings make calling the endpoint impossible (missing key, unknown stage)."""


class LLMUnavailableError(LLMError):
    """Unreachable endpoint, or retryable failures (429/5xx/timeouts) outlasted `max_retries`."""


class LLMRequestRejected(LLMError):
    """A non-retryable HTTP answer (400/401/403/404/422): the request itself is wrong."""

    def __init__(self, message: str, status_code: int | None = None, detail: str | None = None) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.detail = detail  # the server's own words (one line), when it gave any


class LLMOutputInvalid(LLMError):
    """A structured reply stayed invalid after `repair_attempts` repair turns."""

    def __init__(self, message: str, reason: str, last_output: str | None = None) -> None:
        super().__init__(message)
        self.reason = reason
        self.last_output = last_output


class LLMNoAnswer(LLMOutputInvalid):
    """The endpoint answered every attempt with a 200 holding no usable completion (`retry.BadAnswer`).
    It is up, so this is the request's failure (a filter or proxy blocking one payload), not an outage:
    the item fails and is given up after its attempts, and the run goes on; the call keeps an `error` row."""


class LLMPromptRefused(LLMOutputInvalid):
    """The endpoint refused this one prompt, not the request's form: it is over the model's context or a
    provider's maximum string length, or a prompt/content filter blocked it (HTTP 400 or 413 saying so).
    Another item's prompt goes through, so, like `LLMNoAnswer`, the item fails (an `error` row; given up
    after `flow.max_item_attempts`) and the run goes on; an episode ends as `error`."""

    def __init__(self, message: str, reason: str, status_code: int | None = None, detail: str | None = None) -> None:
        super().__init__(message, reason)
        self.status_code = status_code
        self.detail = detail  # the server's own words (one line)


class BudgetExceeded(LLMError):
    """The run's token or cost budget is spent; raised before the next call is made."""


class LLMModelNotServed(LLMConfigError):
    """A model the run asks with is one the endpoint does not serve (`model_check`): a new run (or, for an
    evaluation, a new --run-id) with a served name is the remedy, never a resume (a run keeps its models)."""
