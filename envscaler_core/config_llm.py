"""The `llm` section of the configuration: how the factory reaches its models and what it pays.

Split out of `config` (which re-exports these models) to keep each module to one job; the endpoint
checks here refuse URL forms the OpenAI client would mangle rather than let a request go astray."""

from __future__ import annotations

import json
from typing import Any, Literal
from urllib.parse import urlparse

from pydantic import BaseModel, ConfigDict, Field, field_validator


FACTORY_FIELDS = frozenset({"model", "messages", "tools", "tool_choice", "response_format", "temperature", "max_tokens",
                            "max_completion_tokens", "stream", "stream_options", "n", "functions", "function_call",
                            "max_output_tokens", "max_new_tokens"})
"""Chat request fields the factory sets (or leaves to the endpoint) itself, the legacy forms of its tools
(`functions`, `function_call`) and other names of the output room: `llm.extra_body` may not. Compared in
any case, spaces and hyphens aside (an outside check got `MAX_TOKENS`, `functions`, `max_output_tokens`
through)."""
CLIENT_OPTIONS = frozenset({"extra_headers", "extra_query", "extra_body", "timeout"})
"""Arguments of the OpenAI client, not body fields: in extra_body they would be sent as fields of the body
(an outside check's `extra_headers` was), so they are refused, saying so."""


def _field_name(key: str) -> str:
    return key.strip().lower().replace("-", "_")


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


class StageModels(_Section):
    """Model name per stage; any OpenAI-compatible endpoint serves them. A model name is part of every
    cached answer's key: changing one re-asks that stage's questions."""

    mine: str = Field(default="gpt-4.1", description="Stage 1: judges whether a task is stateful, infers its env topic.")
    synth: str = Field(default="gpt-4.1", description="Stage 2: writes the env spec and the Python class.")
    validate_test_state: str = Field(default="gpt-4.1", description="Stage 3: writes the initial state the validation probes start from.")
    validate_proposer: str = Field(default="gpt-4.1-mini", description="Stage 3: proposes the tool calls that probe the class.")
    validate_judge: str = Field(default="gpt-4.1-mini", description="Stage 3: judges each call's result against the spec.")
    scen: str = Field(default="gpt-4.1", description="Stage 4: writes scenarios (initial state, task, checklist).")
    check: str = Field(default="gpt-4.1-mini", description="Stage 4: turns checklist items into check functions.")
    agent: str = Field(default="gpt-4.1-mini", description="Rollouts (and `eval --agent llm`): the agent that calls the tools.")
    user_sim: str = Field(default="gpt-4.1", description="Conversational rollouts: the simulated user.")
    embedding: str = Field(default="text-embedding-3-large", description="Stage 1 topic dedup and diversity selection.")


class Price(_Section):
    """USD per million tokens. `cached_input_per_mtok` prices the prompt tokens a provider serves from
    its prefix cache (`usage.prompt_tokens_details.cached_tokens`); unset, they cost the full input
    price (a provider without a cache discount, e.g. a self-hosted server billed by the hour)."""

    input_per_mtok: float = Field(ge=0, description="USD per million prompt tokens.")
    output_per_mtok: float = Field(ge=0, description="USD per million completion tokens.")
    cached_input_per_mtok: float | None = Field(default=None, ge=0, description=(
        "USD per million prompt tokens served from the provider's prefix cache; None = input_per_mtok."))

    @property
    def cached_rate(self) -> float:
        return self.input_per_mtok if self.cached_input_per_mtok is None else self.cached_input_per_mtok


def _default_prices() -> dict[str, Price]:
    """OpenAI's list prices (cached input at a quarter of input for the GPT-4.1 family)."""
    return {
        "gpt-4.1": Price(input_per_mtok=2.0, output_per_mtok=8.0, cached_input_per_mtok=0.5),
        "gpt-4.1-mini": Price(input_per_mtok=0.4, output_per_mtok=1.6, cached_input_per_mtok=0.1),
        "text-embedding-3-large": Price(input_per_mtok=0.13, output_per_mtok=0.0),
    }


class LLMSettings(_Section):
    """The LLM endpoint and how it is called. The endpoint, key, timeouts, retries and rates are how a run
    reaches a model, not what it asks: `envscaler resume` takes them from the current environment."""

    base_url: str | None = Field(default=None, description=(
        "OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1; unset = https://api.openai.com/v1. Azure "
        "OpenAI: its v1 form https://<resource>.openai.azure.com/openai/v1 (the deployment name is the model); "
        "its classic per-deployment URL, or any URL with a query string, is refused (the client would mangle it)."))
    api_key: str | None = Field(default=None, description=(
        "API key (prefer the environment: it is never stored with a run). Loopback endpoints need none."))
    models: StageModels = Field(default_factory=StageModels, description="Model name per stage (see llm.models).")
    timeout_s: float = Field(default=60.0, gt=0, description=(
        "Seconds before one HTTP request is abandoned (and retried): the whole attempt, from sending to the last "
        "byte of the answer, however slowly the server trickles it."))
    max_retries: int = Field(default=6, ge=0, description=(
        "HTTP retries on 429/5xx/timeouts/connection errors (not on a 429/402 that says the account is out of "
        "quota or credit: that stops the run at once)."))
    backoff_base_s: float = Field(default=0.5, gt=0, description="First retry delay; doubles per retry (a Retry-After header wins).")
    backoff_max_s: float = Field(default=30.0, gt=0, description="Longest delay between two retries.")
    max_concurrency: int = Field(default=64, ge=1, description="Requests in flight at once, across all stages of a process.")
    requests_per_minute: int | None = Field(default=None, ge=1, description="Client-side rate limit; unset = none.")
    structured_output: Literal["json_object", "json_schema", "none"] = Field(default="json_object", description=(
        "How structured requests ask for JSON: json_object (response_format {\"type\": \"json_object\"}), "
        "json_schema (the reply contract's schema as response_format json_schema: LM Studio, vLLM, SGLang), none (no "
        "response_format; the prompt's instructions and the tolerant parser carry it). A server that refuses "
        "response_format anyway (a 4xx naming it) is asked again without it, for the rest of the run (logged once). "
        "Not part of the cache key: every answer is validated against the same reply contract."))
    repair_attempts: int = Field(default=2, ge=0, description="Structured-output repair turns; never unbounded.")
    max_output_tokens: int = Field(default=16384, ge=256, description=(
        "Ceiling of the output room asked for when a reply was cut off (finish_reason 'length') and is retried."))
    cache: bool = Field(default=True, description=(
        "Answer identical requests from the store's LLM cache (across runs; an evaluation only from its own run) "
        "instead of paying for them again: the first answer recorded for a request is the one served, so a later "
        "run paying again does not change it. Off, the run neither reads the cache nor feeds it: its answers "
        "are recorded (audit, cost) but served to no other run, and a resumed run pays again for what it "
        "re-asks (resumed with the cache on, it is served its own answers)."))
    prices: dict[str, Price] = Field(default_factory=_default_prices, description=(
        "USD per million tokens per model name, for cost figures and budget.max_cost_usd. Set in a config file: "
        "[llm.prices.\"my-model\"]; your entries are added to the defaults (an entry for a model that has a default "
        "price replaces that model's price only). A model without a price costs 0: warned once, named on the run "
        "summary's cost line, and a run with budget.max_cost_usd is refused while a stage's model (or eval's --model) has no price."))

    extra_body: dict[str, Any] = Field(default_factory=dict, description=(
        "JSON fields added to the body of every chat completion request, for what an endpoint needs beyond "
        "the OpenAI parameters: DashScope's Qwen3 open models {\"enable_thinking\": false} (refused otherwise "
        "on non-streamed calls), vLLM's {\"chat_template_kwargs\": {\"enable_thinking\": false}}. In the "
        "environment as a JSON object, ENVSCALER_LLM__EXTRA_BODY='{\"enable_thinking\": false}' (or one field, "
        "ENVSCALER_LLM__EXTRA_BODY__ENABLE_THINKING=false, its value read as JSON when it is JSON). A field the "
        "factory writes itself (" + ", ".join(sorted(FACTORY_FIELDS)) + ") is refused. Not sent with "
        "embeddings requests. Part of the cache key (a changed field asks again; the same extra_body is answered "
        "from the cache), except values of fields named like secrets (api_token, Authorization, ...), which are "
        "never stored with a run either: a resume in another process needs them in its environment."))
    embedding_base_url: str | None = Field(default=None, description=(
        "OpenAI-compatible endpoint for the embeddings requests (Stage 1 topic dedup and selection), when the "
        "chat endpoint has no /embeddings (DeepSeek, Anthropic, Groq, a chat-only vLLM or SGLang); "
        "llm.models.embedding names its model. Unset = base_url."))
    embedding_api_key: str | None = Field(default=None, description=(
        "API key for embedding_base_url (never stored with a run); unset = api_key. Loopback endpoints need none."))

    @field_validator("base_url", "embedding_base_url")
    @classmethod
    def _a_base_url_the_client_can_extend(cls, value: str | None) -> str | None:
        """The client appends `/chat/completions` to the URL text as given: after a query string it lands
        inside the query (`...?api-version=2024-10-21chat/completions`, a bare 404), so such URLs,
        Azure's classic per-deployment form among them, are refused here, naming the form that works. An
        empty `?` or `#` (the request went to `/v1/` with the query `chat/completions`) and a URL without
        http:// or https:// (retried max_retries times as unreachable, or blamed on a missing key) were let
        through by an outside check's probes: refused too, at configuration, in one line."""
        if value is None:
            return value
        parts = urlparse(value)
        if "/openai/deployments/" in f"{parts.path}/":
            raise ValueError("Azure OpenAI's classic per-deployment URL (.../openai/deployments/<name>?api-version=...) "
                             "is not supported: use "
                             "the v1 form https://<resource>.openai.azure.com/openai/v1 with the deployment name as "
                             "the model (llm.models.*) and the key in OPENAI_API_KEY")
        if parts.scheme.lower() not in ("http", "https") or "://" not in value:
            bare = value.split("://", 1)[-1].lstrip("/") or "127.0.0.1:8000/v1"
            raise ValueError(f"{value!r} is not a URL the factory can call: it needs http:// or https:// in front, "
                             f"e.g. http://{bare}")
        if not parts.hostname:
            raise ValueError("it names no host: give the whole URL, e.g. http://127.0.0.1:8000/v1")
        if parts.query or parts.fragment or "?" in value or "#" in value:  # an empty `?` or `#` counts too
            raise ValueError("a query string or fragment cannot be part of it: the client would put before the "
                             "request path (…?x=ychat/completions); give the endpoint's base path only, "
                             "e.g. http://127.0.0.1:8000/v1")
        return value

    @field_validator("extra_body", mode="before")
    @classmethod
    def _a_json_object(cls, value: Any) -> Any:
        """The environment gives the whole body as text: it must read as a JSON object."""
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except json.JSONDecodeError as exc:
                raise ValueError(f"not valid JSON ({exc.msg} at character {exc.pos}); give a JSON object, "
                                 "e.g. {\"enable_thinking\": false}") from None
            if not isinstance(value, dict):
                raise ValueError(f"a JSON {type(value).__name__}, not an object; give e.g. {{\"enable_thinking\": false}}")
        return value

    @field_validator("extra_body")
    @classmethod
    def _no_field_the_factory_writes(cls, value: dict[str, Any]) -> dict[str, Any]:
        options = sorted(k for k in value if _field_name(str(k)) in CLIENT_OPTIONS)
        if options:
            raise ValueError(f"{', '.join(options)} {'is an argument' if len(options) == 1 else 'are arguments'} of "
                             "the OpenAI client, not a body field: here it would be sent inside the request body; "
                             "extra_body holds body fields only")
        taken = sorted(k for k in value if _field_name(str(k)) in FACTORY_FIELDS)
        if taken:
            raise ValueError(f"{', '.join(taken)} cannot be set here: the factory writes "
                             f"{'it' if len(taken) == 1 else 'them'} itself in every request")
        try:
            json.dumps(value, allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"not plain JSON ({exc})") from None
        return value

    @field_validator("prices", mode="before")
    @classmethod
    def _over_the_default_prices(cls, value: Any) -> Any:
        """A config file's `[llm.prices."m"]` adds or replaces the price of `m`, never the whole table."""
        return {**_default_prices(), **value} if isinstance(value, dict) else value
