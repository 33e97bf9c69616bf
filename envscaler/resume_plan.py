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

import typer

from envscaler.commands._common import fail
from envscaler_core.config import (
    ConfigError,
    Settings,
    env_setting_names,
    given_settings,
    load_settings,
    merge_layers,
    taken_from_current,
)
from envscaler_core.models import Run

CONTINUE_REMEDY = "drop it to continue the run, or use a new --run-id for a new experiment"


def resume_settings(run: Run, config: Path | None, db: str | None, *, max_tokens: int | None = None,
                    max_cost: float | None = None, endpoint: dict[str, Any] | None = None,
                    flags: dict[str, Any] | None = None, refuse_changes: bool = False,
                    remedy: str = CONTINUE_REMEDY, note_changes: bool = False) -> Settings:
    """`endpoint` (base_url/api_key) wins over everything: a demo run resumes against a fresh mock.
    `flags` are settings the command's flags give (`run --out`, `--strict`), taken like the config file's.
    `refuse_changes` (`run` on an existing run id): an experiment setting given now that differs from the
    run's is refused in one line naming it and ending with `remedy`. Commands that only read a run's data
    (`export`) refuse the same way: they must see what the run made. `note_changes` (`resume`): the run's
    own value is kept and each such setting is named on stderr as ignored (an outside check set the model
    a failed stage needed and resumed: the resume sent the old model again without a word)."""
    stored: dict[str, Any] = copy.deepcopy(run.config)
    stored.pop("eval", None)  # an evaluation's request (agent, model, tasks): the eval command checks it
    try:
        given = merge_layers(given_settings(config), flags or {})
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
        settings = load_settings(overrides=stored)
    except ConfigError as exc:
        fail(f"run {run.run_id}: {exc}")
    if refuse_changes or note_changes:
        changes = other_experiment(run.run_id, settings, config, given, flags or {})
        if changes and refuse_changes:
            fail(f"{changes[0]}; {remedy}")
        for change in changes:
            typer.echo(f"note: {change}: ignored; a new --run-id runs with it (answers already paid for are "
                       "served from the cache)", err=True)
    return settings


FLAG_OF = {("mine", "strict_sources"): "--strict"}


def other_experiment(run_id: str, settings: Settings, config: Path | None, given: dict[str, Any],
                     flags: dict[str, Any]) -> list[str]:
    """One line per experiment setting (not one `resume` takes from the current command) given explicitly
    now whose value differs from the run's: the command would silently run another experiment under the
    same run id (or, before, replace the run's settings with it)."""
    try:
        now = load_settings(config, overrides=flags).model_dump(mode="json", by_alias=True)
    except ConfigError as exc:
        fail(str(exc))
    own = settings.model_dump(mode="json", by_alias=True)
    lines = []
    for path in _leaves(given):
        if len(path) < 2 or taken_from_current(path[0], path[1]):
            continue
        mine, theirs = _at(now, path), _at(own, path)
        if mine != theirs:
            name = ".".join(path)
            where = FLAG_OF.get(path[:2]) if _at(flags, path) is not None else None
            where = where or env_setting_names().get(path) or (f"in {config}" if config else "given")
            lines.append(f"run {run_id} keeps its own settings (one run is one experiment): {name} is {theirs!r} "
                         f"there, {mine!r} here ({where})")
    return lines


def _leaves(tree: dict[str, Any], prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    out: list[tuple[str, ...]] = []
    for key, value in tree.items():
        path = (*prefix, str(key))
        # prices are one setting (a dict of models), taken whole; other dicts are sections
        out += _leaves(value, path) if isinstance(value, dict) and path[-1] != "prices" else [path]
    return out


def _at(tree: Any, path: tuple[str, ...]) -> Any:
    for key in path:
        if not isinstance(tree, dict):
            return None
        tree = tree.get(key)
    return tree


def endpoint_change(run: Run, settings: Settings) -> str | None:
    """'endpoint X (the run last used Y)' when a resume reaches its model somewhere else."""
    before = (run.config.get("llm") or {}).get("base_url")
    now = settings.llm.base_url
    if before == now:
        return None
    return f"endpoint {now or 'https://api.openai.com/v1'} (the run last used {before or 'https://api.openai.com/v1'})"
