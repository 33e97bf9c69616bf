"""An early check of the run's stage model names against the models the chat endpoint serves.

Self-hosted servers serve one or a few names (vLLM's --served-model-name, llama.cpp's alias, Ollama's
tags); a stage left at its default name (gpt-4.1-mini) met vLLM's 404 "The model ... does not exist" only
when that stage came, after ~170 paid calls, and the message did not name the setting (an outside check).
Now a run lists `/v1/models` once before it pays for anything. Listing models is free and not every server
has it: a server without it, or listing none, is not checked, nor is the bundled mock (it answers any name)
or Azure (it lists base models, not the deployment names it takes).

The listing alone never stops a run: llama.cpp lists its GGUF path and answers any name, TGI ignores the
name, LiteLLM lists wildcards (`openai/*`); an outside check found runs on all three stopped by it. A stage
model missing from the listing is confirmed with one tiny chat request per distinct name (accounted under
the stage "preflight"): only a 404, or "model ... does not exist" in any status, stops the run, in one line
naming each stage setting, its environment variable, the server's words and the names it lists. Any other
answer means the server serves the name. The remedy named is a new run id: a run's models are its
experiment, which a resume keeps."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterable, Sequence
from typing import Any
from urllib.parse import urlparse

from envscaler_core.config_llm import StageModels
from envscaler_core.llm.call import Call
from envscaler_core.llm.errors import BudgetExceeded, LLMError, LLMModelNotServed, LLMRequestRejected
from envscaler_core.llm.exchange import read_response, request_body

MOCK_OWNER = "envscaler-mock"
LIST_TIMEOUT_S = 10.0
PREFLIGHT = "preflight"
"""The stage a confirming one-token request is accounted under."""
STAGE_MODEL_FIELDS: dict[str, tuple[str, ...]] = {
    "mine": ("mine",), "synth": ("synth",),
    "validate": ("validate_test_state", "validate_proposer", "validate_judge"),
    "scen": ("scen", "check"), "rollout": ("agent",),
}
"""The `llm.models` fields each factory stage asks with (`user_sim` too in conversational rollouts)."""
_NOT_SERVED_WORDS = re.compile(r"model\b.{0,120}?(?:does not exist|not found|is not served)|no such model|"
                               r"unknown model|model_not_found", re.IGNORECASE)
"""A refusal of the model's name in words (vLLM's "The model `x` does not exist.", Ollama's "model 'x' not
found", OpenAI's `model_not_found`), whatever the status it came with."""


def model_setting(stage: str, model: str, origins: dict[str, str] | None = None) -> str:
    """How an error names the setting a stage's model came from; `origins` names a model given another way
    (`eval bfcl-mt --model qwen3`: "--model 'qwen3'")."""
    if origins and model in origins:
        return origins[model]
    if stage not in StageModels.model_fields:
        return f"the model name {model!r}"
    return f"llm.models.{stage} = {model!r} (ENVSCALER_LLM__MODELS__{stage.upper()})"


def stage_fields(stages: Iterable[str], conversational: bool) -> list[str]:
    """The `llm.models` fields the given factory stages use, in order, once each."""
    fields = [f for stage in stages for f in STAGE_MODEL_FIELDS.get(stage, ())]
    if conversational and "rollout" in stages:
        fields.append("user_sim")
    return list(dict.fromkeys(fields))


def _served(name: str, ids: set[str]) -> bool:
    """`name` is among `ids`, as servers spell them: exactly, Ollama's implicit `:latest`, or a prefix path
    on one side ("models/gemini-2.0-flash", "Qwen/Qwen3-8B" named by its last part is not enough: exact)."""
    return name in ids or f"{name}:latest" in ids or f"models/{name}" in ids or name.removeprefix("models/") in ids


class ModelCheck:
    """`check_models` for `LLMGateway` (self is the gateway)."""

    settings: Any
    endpoint: str
    model_origins: dict[str, str]

    async def check_models(self, fields: Sequence[str], models: dict[str, str] | None = None,
                           remedy: str | None = None) -> None:
        """Stop before any stage's work when a stage's model is not served (unlisted, and refused by name
        when asked); asked once per gateway (a resume or another stage list in the same process does not
        ask again). `models`: the name per field when it is not `llm.models.<field>`; `remedy`: the advice
        when a new factory run is not it (an evaluation's)."""
        if getattr(self, "_models_checked", False) or not fields:
            return
        self._models_checked = True
        if (urlparse(self.endpoint).hostname or "").endswith(".azure.com"):
            return
        try:
            async with asyncio.timeout(LIST_TIMEOUT_S):
                page = await self._client().models.list()  # type: ignore[attr-defined]
            listed = [m for m in (page.data or []) if isinstance(getattr(m, "id", None), str)]
        except Exception:  # noqa: BLE001 - no /v1/models (404), an odd body, slow: nothing to check against
            return
        if not listed or all(getattr(m, "owned_by", None) == MOCK_OWNER for m in listed):
            return
        ids = {m.id for m in listed}
        named_models = [(f, (models or {}).get(f) or getattr(self.settings.models, f)) for f in fields]
        unlisted = list(dict.fromkeys(m for _, m in named_models if not _served(m, ids)))
        refused = {m: words for m in unlisted if (words := await self._refused_by_name(m)) is not None}
        missing = [(f, m) for f, m in named_models if m in refused]
        if not missing:
            return
        shown = ", ".join(sorted(ids)[:20]) + (f" (and {len(ids) - 20} more)" if len(ids) > 20 else "")
        named = "; ".join(model_setting(f, m, self.model_origins) for f, m in missing)
        said = "; ".join(f"{m!r}: \"{w}\"" for m, w in refused.items())
        advice = remedy or (
            f"Set each to a served name (e.g. ENVSCALER_LLM__MODELS__{missing[0][0].upper()}={sorted(ids)[0]}) and "
            "start a new run with it (`envscaler run --run-id <new> ...`: a run's models are its experiment, which "
            "`resume` keeps; answers already paid for are served from the cache), or serve the name on the server")
        raise LLMModelNotServed(
            f"LLM endpoint {self.endpoint} does not serve the model of {len(missing)} stage(s): {named}; asked by "
            f"name it answered {said}; it lists {shown} (GET /v1/models). {advice}")

    async def _refused_by_name(self, model: str) -> str | None:
        """One one-token chat request naming `model`: the server's words when it refuses the name (a 404, or
        "model ... does not exist" in any status), None for any other answer (the server serves the name)."""
        gw: Any = self
        call = Call(f"{PREFLIGHT}:{model}", PREFLIGHT, model, None)
        body = request_body(model, [{"role": "user", "content": "hi"}], {gw._room_parameter: 1})
        try:
            resp = await gw._send(call, f"a one-token request naming model {model!r}", lambda client: client.post(
                "/chat/completions", cast_to=object, content=body))
        except BudgetExceeded:
            raise
        except LLMRequestRejected as exc:
            words = exc.detail or str(exc)
            return words if exc.status_code == 404 or _NOT_SERVED_WORDS.search(words) else None
        except LLMError:
            return None  # no verdict on the name (an outage, a quota): the run's own calls decide
        finally:
            gw._release(call)
        try:
            exchange = read_response(resp, [], None)
        except Exception:  # noqa: BLE001 - an answer we cannot read is still an answer: the name is served
            return None
        gw._count(call, exchange.prompt_tokens, exchange.completion_tokens, exchange.estimated_tokens,
                  exchange.cached_tokens)
        return None
