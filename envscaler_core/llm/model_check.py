"""An early check of the run's stage model names against the models the chat endpoint says it serves.

Self-hosted servers serve one or a few names (vLLM's --served-model-name, llama.cpp's alias, Ollama's
tags); a stage left at its default name (gpt-4.1-mini) met vLLM's 404 "The model ... does not exist" only
when that stage came, after ~170 paid calls, and the message did not name the setting (an outside check).
Now a run lists `/v1/models` once before it pays for anything and stops in one line naming each stage
setting, its environment variable, and the names the server does serve. Listing models is free and not
every server has it: a server without it, or listing none, is not an error (the check is skipped), nor is
the bundled mock (it answers any name) or Azure (it lists base models, not the deployment names it takes)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Sequence
from typing import Any
from urllib.parse import urlparse

from envscaler_core.config_llm import StageModels
from envscaler_core.llm.errors import LLMConfigError

MOCK_OWNER = "envscaler-mock"
LIST_TIMEOUT_S = 10.0
STAGE_MODEL_FIELDS: dict[str, tuple[str, ...]] = {
    "mine": ("mine",), "synth": ("synth",),
    "validate": ("validate_test_state", "validate_proposer", "validate_judge"),
    "scen": ("scen", "check"), "rollout": ("agent",),
}
"""The `llm.models` fields each factory stage asks with (`user_sim` too in conversational rollouts)."""


def model_setting(stage: str, model: str) -> str:
    """How an error names the setting a stage's model came from."""
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

    async def check_models(self, fields: Sequence[str]) -> None:
        """Stop before any paid call when a stage's model is not among the endpoint's `/v1/models`;
        asked once per gateway (a resume or another stage list in the same process does not ask again)."""
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
        named_models = [(f, getattr(self.settings.models, f)) for f in fields]
        missing = [(f, m) for f, m in named_models if not _served(m, ids)]
        if not missing:
            return
        shown = ", ".join(sorted(ids)[:20]) + (f" (and {len(ids) - 20} more)" if len(ids) > 20 else "")
        named = "; ".join(model_setting(f, m) for f, m in missing)
        raise LLMConfigError(
            f"LLM endpoint {self.endpoint} does not serve the model of {len(missing)} stage(s): {named}; it serves "
            f"{shown} (GET /v1/models). Set each to a served name (e.g. ENVSCALER_LLM__MODELS__"
            f"{missing[0][0].upper()}={sorted(ids)[0]}), or serve the name on the server, then resume")
