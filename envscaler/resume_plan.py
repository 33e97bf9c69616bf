"""The settings a resume runs with: the run's own, except how it reaches its model, sandbox and store.

A run is one experiment: its models, counts, thresholds, seeds and budget stay what it started with (a
cached answer's key holds the model and the prompt, never the endpoint). How it reaches things is the
resuming command's business: an endpoint or key from OPENAI_BASE_URL/OPENAI_API_KEY, ENVSCALER_LLM__*,
`-c file` or `--db` replaces the run's (see `RESUME_TAKES_CURRENT` in envscaler_core.config). Only values
given explicitly count: a resume without them keeps what the run used. `--max-tokens`/`--max-cost`
raise the budget, and the run keeps the raised value for later resumes."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from envscaler.commands._common import fail
from envscaler_core.config import ConfigError, Settings, given_settings, load_settings, taken_from_current
from envscaler_core.models import Run


def resume_settings(run: Run, config: Path | None, db: str | None, *, max_tokens: int | None = None,
                    max_cost: float | None = None, endpoint: dict[str, Any] | None = None) -> Settings:
    """`endpoint` (base_url/api_key) wins over everything: a demo run resumes against a fresh mock."""
    stored: dict[str, Any] = copy.deepcopy(run.config)
    try:
        given = given_settings(config)
    except ConfigError as exc:
        fail(str(exc))
    if db is not None:  # --db '' is a mistake to report, not the default store
        given.setdefault("store", {})["url"] = db
    for section, values in given.items():
        if not isinstance(values, dict):
            continue
        for field, value in values.items():
            if taken_from_current(section, field):
                stored.setdefault(section, {})[field] = value
    if max_tokens is not None or max_cost is not None:
        budget = dict(stored.get("budget") or {})
        budget.update({k: v for k, v in (("max_tokens", max_tokens), ("max_cost_usd", max_cost)) if v is not None})
        stored["budget"] = budget
    if endpoint:
        stored.setdefault("llm", {}).update(endpoint)
    try:
        return load_settings(overrides=stored)
    except ConfigError as exc:
        fail(f"run {run.run_id}: {exc}")


def endpoint_change(run: Run, settings: Settings) -> str | None:
    """'endpoint X (the run last used Y)' when a resume reaches its model somewhere else."""
    before = (run.config.get("llm") or {}).get("base_url")
    now = settings.llm.base_url
    if before == now:
        return None
    return f"endpoint {now or 'https://api.openai.com/v1'} (the run last used {before or 'https://api.openai.com/v1'})"
