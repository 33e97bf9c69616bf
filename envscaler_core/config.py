"""The factory's one configuration object (the only global-ish state we allow).

Sources, later ones win: built-in defaults < a config file (TOML, JSON or YAML) < environment
variables (`ENVSCALER_<SECTION>__<FIELD>`, plus the conventional `OPENAI_BASE_URL`/`OPENAI_API_KEY`
and `ENVSCALER_DB_URL`). Bad values fail with the field path in the message.
"""

from __future__ import annotations

import contextlib
import json
import os
import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from envscaler_core.config_llm import LLMSettings, Price, StageModels  # the llm section (re-exported)
from envscaler_core.secret_fields import masked as masked_secrets, unmask_extra_body
from envscaler_core.secret_urls import URL_SETTINGS, is_masked, mask_url, remember_real_url, remembered_real_url


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ConfigError(ValueError):
    """A configuration problem, phrased for a one-line error message."""


SandboxBackend = Literal["auto", "bwrap", "rlimit"]


class SandboxSettings(_Section):
    """Where generated env code runs (docs/sandbox.md)."""

    backend: SandboxBackend = Field(default="auto", description=(
        "auto (bubblewrap when it works, else refuse unless allow_weak), bwrap, or rlimit (resource limits only)."))
    allow_weak: bool = Field(default=False, description="Permit the rlimit-only backend when namespaces are unavailable.")
    workers: int | None = Field(default=None, ge=1, description="Sandbox worker processes; unset = one per core.")
    call_timeout_s: float = Field(default=5.0, gt=0, description="Seconds one tool call (or env load) may take.")
    python: str | None = Field(default=None, description=(
        "Absolute interpreter path readable by the sandbox uid. `run` and `resume` look at it before writing "
        "anything (it exists, is an executable file, and as root uid 65534 reaches it): exit 2 naming it."))


def envscaler_data_dir(environ: dict[str, str] | None = None) -> Path:
    """The one place runs live unless configured otherwise: `$ENVSCALER_DATA_DIR`, else
    `$XDG_DATA_HOME/envscaler`, else `~/.local/share/envscaler`. The demo, `run`, `status`, `export`,
    `serve-mcp` and `report` all default to the store here, whatever directory they are started from."""
    env = os.environ if environ is None else environ
    if env.get("ENVSCALER_DATA_DIR"):
        return Path(env["ENVSCALER_DATA_DIR"]).expanduser().resolve()
    data = Path(env["XDG_DATA_HOME"]).expanduser() if env.get("XDG_DATA_HOME") else Path.home() / ".local" / "share"
    return (data / "envscaler").resolve()


def default_store_url() -> str:
    return f"duckdb:///{envscaler_data_dir() / 'envscaler.duckdb'}"


def store_option(store_url: str | None) -> str:
    """` --db URL` when the store is not the default one, else "": a command we print (a resume hint)
    pasted as printed must reach the run's own store."""
    import shlex

    return f" --db {shlex.quote(store_url)}" if store_url and store_url != default_store_url() else ""


def outputs_root(settings: Settings) -> Path:
    """Where run outputs go (`<root>/<run_id>/`): `flow.out_dir` if set, else `out/` beside a DuckDB store
    (so the default store's runs write to $ENVSCALER_DATA_DIR/out, whatever directory a command starts
    from), else `$ENVSCALER_DATA_DIR/out` for a server store. Always absolute."""
    if settings.flow.out_dir:
        return Path(settings.flow.out_dir).expanduser().resolve()
    from envscaler_core.store.urls import parse_store_url

    try:
        location = parse_store_url(settings.store.url)
    except Exception:  # noqa: BLE001 - a bad URL fails where the store is opened, with its own message
        location = None
    if location is not None and location.path is not None:
        return location.path.parent / "out"
    return envscaler_data_dir() / "out"


class StoreSettings(_Section):
    """Where runs live: every record, the runs and the LLM cache."""

    url: str = Field(default_factory=default_store_url, description=(
        "A DuckDB file (a plain path, or duckdb:////absolute/path.duckdb) or postgresql+psycopg://user:pw@host/db. "
        "Default: $ENVSCALER_DATA_DIR/envscaler.duckdb (ENVSCALER_DATA_DIR defaults to $XDG_DATA_HOME/envscaler "
        "or ~/.local/share/envscaler)."))


class MineSettings(_Section):
    """Stage 1: which source tasks become env topics."""

    min_usefulness: int = Field(default=7, ge=1, le=10, description="Topics scored below this (1-10) are dropped.")
    min_modelability: int = Field(default=7, ge=1, le=10, description="Topics scored below this (1-10) are dropped.")
    similarity_threshold: float = Field(default=0.9, gt=0, le=1, description="Cosine at/above which topics are duplicates.")
    select_n: int = Field(default=20, ge=1, description=(
        "Topics kept by diversity selection. A topic the run already built a candidate on stays selected when "
        "a later selection (over files added with `run --add-sources`) moves elsewhere, so such a run can hold "
        "more than `select_n` selected topics."))
    selection: Literal["kmeans", "farthest_point"] = Field(default="farthest_point", description=(
        "Diversity selection over the topic embeddings."))
    seed: int = Field(default=42, description="Seed of the diversity selection (same seed, same topics).")
    max_tasks: int | None = Field(default=None, ge=1, description="Cap on source tasks read (demo slices).")
    max_task_chars: int = Field(default=10_000, ge=1, description=(
        "A source task longer than this many characters is counted malformed (`file:line` and its length), "
        "the file's other records are read: one pasted document would go whole into a judge request."))
    strict_sources: bool = Field(default=False, description="Any malformed source record stops the run before it starts.")
    llm_batch: int = Field(default=10, ge=1, description=(
        "Source tasks per stateful-judgement / topic-inference request: one task alone is a prompt below "
        "providers' caching minimum, so batching pays the instructions once per batch."))


class SynthSettings(_Section):
    """Stage 2: writing env classes."""

    step_attempts: int = Field(default=3, ge=1, description="Attempts per synthesis step, error fed back.")


class ValidateSettings(_Section):
    """Stage 3: testing env classes in the sandbox (`validate` in files and variables)."""

    mode: Literal["programmatic", "llm", "both"] = Field(default="both", description=(
        "programmatic (generated probes), llm (proposer + judge) or both."))
    rounds: int = Field(default=30, ge=1, description="Probe calls per candidate and mode.")
    chains: int = Field(default=3, ge=1, description=(
        "Independent proposer/judge chains the LLM rounds are split over (each its own episode from the "
        "test state, run at once): the pass is rounds / chains + 1 calls deep."))
    threshold: float = Field(default=0.85, ge=0, le=1, description="Share of passing rounds needed to accept an env.")


class ScenSettings(_Section):
    """Stage 4: verified scenarios with rule-based checks."""

    per_env: int = Field(default=3, ge=1, description="Initial states (and so scenarios) per env.")
    repair_attempts: int = Field(default=2, ge=0, description="Repair turns for a scenario or check that fails verification.")
    check_timeout_s: float = Field(default=2.0, gt=0, description="Seconds one check function may run.")
    check_repeats: int = Field(default=3, ge=2, le=20, description=(
        "Evaluations of every check on each state during verification (each in fresh sandbox units); "
        "differing results refuse the check as nondeterministic."))


class RolloutSettings(_Section):
    """Stage 5: agent rollouts on verified scenarios."""

    mode: Literal["non_conversational", "conversational"] = Field(default="non_conversational", description=(
        "non_conversational (the task is the first user turn) or conversational (a simulated user)."))
    per_scenario: int = Field(default=1, ge=1, description="Independent rollouts per scenario.")
    max_steps: int = Field(default=30, ge=1, description="Agent turns before a rollout is cut off.")
    require_all_passed: bool = Field(default=True, description=(
        "SFT exports keep only trajectories whose checks all passed (false: every finished one, its reward in the row)."))
    max_tool_errors: int | None = Field(default=None, ge=0, description=(
        "SFT exports keep only trajectories with at most this many failed tool calls; unset = no limit."))
    min_steps: int = Field(default=1, ge=0, description="SFT exports keep only trajectories with at least this many agent steps.")
    drop_collateral_changes: bool = Field(default=True, description=(
        "SFT exports drop trajectories that change the state outside the task's footprint (what its verified "
        "reference solution changes); scenarios without a footprint are not guarded (docs/scenarios_and_rollouts.md)."))


class BudgetSettings(_Section):
    """Caps over a whole run (resumes included). A run that reaches one stops with status stopped_budget
    (exit 3); `envscaler resume RUN --max-tokens N` raises it, and the run keeps the raised value. A cap is
    checked right before each request is sent, counting what the requests in flight will likely be billed
    (learned from the run's replies so far): only those can take a run past it, by what they bill beyond
    that (measured: 2% over on a 6-task evaluation, 14% on the API-Bank slice with $0.20; 8% on a 32-task
    evaluation whose endpoint bills prompts at 3x the ~4 bytes/token estimate, 4% with 3,000-token
    completions, were 98% and 32% before; docs/llm.md)."""

    max_tokens: int | None = Field(default=None, ge=1, description="LLM tokens (prompt + completion); unset = no cap.")
    max_cost_usd: float | None = Field(default=None, gt=0, description="LLM cost in USD at llm.prices; unset = no cap.")


class FlowSettings(_Section):
    """How the orchestrator cuts work: one Prefect task per batch, not per item (tasks cost ~25 ms)."""

    batch_size: int = Field(default=25, ge=1, description="Items per Prefect task.")
    batches_in_flight: int = Field(default=8, ge=1, description="Concurrent batch tasks per stage.")
    stream: bool = Field(default=True, description=(
        "Stream synth -> validate -> scen -> rollout: an item moves on as soon as its own batch is done, "
        "instead of each stage waiting for the whole previous one (docs/operations.md). Batches are then cut "
        "so that `batches_in_flight` of them share a lane's work (at most `batch_size` items each)."))
    max_item_attempts: int = Field(default=3, ge=1, description="Tries per item across resumes before it is given up.")
    out_dir: str | None = Field(default=None, description=(
        "Where a run's exports and report go: <out_dir>/<run_id>/. Unset = out/ beside a DuckDB store "
        "($ENVSCALER_DATA_DIR/out for the default store), $ENVSCALER_DATA_DIR/out for PostgreSQL. A relative "
        "path is taken from the directory the command runs in; the run records the absolute one."))


class Settings(_Section):
    """Everything the factory can be told; see docs/configuration.md (generated from these models)."""

    llm: LLMSettings = Field(default_factory=LLMSettings)
    sandbox: SandboxSettings = Field(default_factory=SandboxSettings)
    store: StoreSettings = Field(default_factory=StoreSettings)
    mine: MineSettings = Field(default_factory=MineSettings)
    synth: SynthSettings = Field(default_factory=SynthSettings)
    validate_: ValidateSettings = Field(default_factory=ValidateSettings, alias="validate")
    scen: ScenSettings = Field(default_factory=ScenSettings)
    rollout: RolloutSettings = Field(default_factory=RolloutSettings)
    budget: BudgetSettings = Field(default_factory=BudgetSettings)
    flow: FlowSettings = Field(default_factory=FlowSettings)

    model_config = ConfigDict(extra="forbid", populate_by_name=True)


_ENV_ALIASES = {
    "OPENAI_BASE_URL": ("llm", "base_url"),
    "OPENAI_API_KEY": ("llm", "api_key"),
    "ENVSCALER_DB_URL": ("store", "url"),
}
_EMPTY_IS_UNSET = frozenset({"OPENAI_BASE_URL", "OPENAI_API_KEY"})
_ENV_PREFIX = "ENVSCALER_"


def _read_file(path: Path) -> dict[str, Any]:
    if not path.is_file():
        raise ConfigError(f"config file not found: {path}")
    from envscaler_core.text_files import NotUTF8, RepeatedKey, json_once, read_utf8, yaml_once

    try:  # a UTF-8 byte order mark (Notepad's) is dropped; UTF-16/32 is named with how to convert it
        text = read_utf8(path)
    except NotUTF8 as exc:
        raise ConfigError(f"{path}: {exc}") from None
    try:
        if path.suffix == ".toml":
            data = tomllib.loads(text)
        elif path.suffix == ".json":
            data = json_once(text)  # a key named twice is refused, as TOML refuses it
        elif path.suffix in (".yaml", ".yml"):
            data = yaml_once(text) or {}
        else:
            raise ConfigError(f"{path}: unsupported config format {path.suffix!r} (use .toml, .json or .yaml)")
    except RepeatedKey as exc:
        raise ConfigError(f"{path}: {exc}") from None
    except (tomllib.TOMLDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError(f"{path}: not valid {path.suffix[1:]}: {exc}") from exc
    except ImportError as exc:  # pragma: no cover - yaml always present with prefect
        raise ConfigError(f"{path}: YAML needs PyYAML installed") from exc
    except Exception as exc:
        if isinstance(exc, ConfigError):
            raise
        raise ConfigError(f"{path}: cannot parse: {_one_line(exc)}") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: top level must be a mapping of sections, got {type(data).__name__}")
    return data


def _one_line(exc: Exception) -> str:
    """A parser's error in one line: PyYAML's spans six (context, the quoted line, a caret, the problem)."""
    problem, mark = getattr(exc, "problem", None), getattr(exc, "problem_mark", None)
    if problem and mark is not None:
        context = getattr(exc, "context", None)
        return f"{context + ': ' if context else ''}{problem} (line {mark.line + 1}, column {mark.column + 1})"
    return " ".join(str(exc).split())


def _set_path(data: dict[str, Any], keys: list[str], value: str) -> None:
    node = data
    for key in keys[:-1]:
        node = node.setdefault(key, {})
        if not isinstance(node, dict):
            raise ConfigError(f"environment override {'.'.join(keys)} collides with a scalar setting")
    node[keys[-1]] = value


def _env_overrides(environ: dict[str, str]) -> tuple[dict[str, Any], dict[tuple[str, ...], str]]:
    """The overrides, and for each setting path the variable that set it (named in error messages)."""
    data: dict[str, Any] = {}
    origin: dict[tuple[str, ...], str] = {}
    for name, path in _ENV_ALIASES.items():
        # an empty OpenAI variable is the shells' "unset"; an empty store URL is an error, not the default
        # store (a script passing "$UNSET_VAR" wrote its runs into the user's real store)
        if environ.get(name) or (name in environ and name not in _EMPTY_IS_UNSET):
            _set_path(data, list(path), environ[name])
            origin[path] = name
    for name, value in environ.items():
        if name.startswith(_ENV_PREFIX) and "__" in name:
            keys = [k.lower() for k in name[len(_ENV_PREFIX):].split("__")]
            _set_path(data, keys, _json_or_text(value) if keys[:2] == ["llm", "extra_body"] and len(keys) > 2 else value)
            origin[tuple(keys)] = name
    return data, origin


def _json_or_text(value: str) -> Any:
    """One `llm.extra_body` field from the environment: its JSON value (false, 1, {...}) when it is JSON,
    else the text (the body is sent as JSON, where "false" is not false)."""
    try:
        return json.loads(value)
    except json.JSONDecodeError:
        return value


def merge_layers(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    """`override` over `base`, section by section (the layering of `load_settings`)."""
    out = dict(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge_layers(out[key], value)
        else:
            out[key] = value
    return out


def given_settings(path: str | Path | None = None, environ: dict[str, str] | None = None) -> dict[str, Any]:
    """What a config file and the environment set explicitly (defaults left out), layered as in
    `load_settings`: how `resume` tells a setting the user gave now from one it would only default."""
    data: dict[str, Any] = _read_file(Path(path)) if path else {}
    from_env, _ = _env_overrides(dict(os.environ if environ is None else environ))
    return merge_layers(data, from_env)


def env_setting_names(environ: dict[str, str] | None = None) -> dict[tuple[str, ...], str]:
    """For each setting path the environment sets, the variable that sets it (named in messages)."""
    return _env_overrides(dict(os.environ if environ is None else environ))[1]


# Settings a resumed run takes from the command that resumes it (its environment, config file and
# flags) instead of from the run: how the run reaches its model, sandbox and store, not what it asks.
# Everything else (models, prompts' inputs, counts, thresholds, seeds, the budget) stays the run's own:
# a run is one experiment; only `resume --max-tokens/--max-cost` raise its budget (and the run keeps it).
RESUME_TAKES_CURRENT: dict[str, tuple[str, ...] | None] = {
    "llm": ("base_url", "api_key", "timeout_s", "max_retries", "backoff_base_s", "backoff_max_s", "max_concurrency",
            "requests_per_minute", "max_output_tokens", "cache", "structured_output", "prices", "extra_body",
            "embedding_base_url", "embedding_api_key"),
    "sandbox": None,  # every field
    "store": None,
    "flow": ("batch_size", "batches_in_flight", "max_item_attempts", "out_dir"),
}


def taken_from_current(section: str, field: str) -> bool:
    """Whether `resume` takes `section.field` from the current command (else from the run)."""
    if section not in RESUME_TAKES_CURRENT:
        return False
    fields = RESUME_TAKES_CURRENT[section]
    return fields is None or field in fields


def load_settings(path: str | Path | None = None, environ: dict[str, str] | None = None,
                  overrides: dict[str, Any] | None = None) -> Settings:
    """Build Settings from defaults, an optional file, the environment and explicit `overrides`
    (CLI flags, later wins); raise ConfigError with the offending field path (e.g.
    `validate.threshold: Input should be less than or equal to 1`)."""
    data: dict[str, Any] = _read_file(Path(path)) if path else {}
    env = dict(os.environ if environ is None else environ)
    _refuse_single_underscores(env)
    from_env, origin = _env_overrides(env)
    data = merge_layers(data, from_env)
    data = merge_layers(data, overrides or {})
    unmask_urls(data, env)
    _unmask_extra_body(data, from_env)
    try:
        settings = Settings.model_validate(data)
    except ValidationError as exc:
        from envscaler_core.config_errors import describe_invalid

        raise ConfigError(describe_invalid(exc, path, {k: (v, env[v]) for k, v in origin.items()},
                                           overrides or {})) from None
    refuse_an_unpriced_budget(settings, path)
    return settings


def _setting_paths(model: type[BaseModel] | None = None, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every setting's path, sections and nested sections included (`("llm", "models", "agent")`)."""
    paths: list[tuple[str, ...]] = []
    for name, field in (model or Settings).model_fields.items():
        path = (*prefix, field.alias or name)
        paths.append(path)
        if isinstance(field.annotation, type) and issubclass(field.annotation, BaseModel):
            paths += _setting_paths(field.annotation, path)
    return paths


def _refuse_single_underscores(environ: dict[str, str]) -> None:
    """`ENVSCALER_SCEN_PER_ENV` (one underscore where two belong) would be ignored without a word while
    the user believes it set `scen.per_env`: refuse a variable that spells a setting that way, naming
    the right one. Other `ENVSCALER_` names with single underscores (ENVSCALER_DATA_DIR, ...) stay free."""
    spelled = {"_".join(path): path for path in _setting_paths() if len(path) > 1}
    for name in sorted(environ):
        if not name.startswith(_ENV_PREFIX) and name.upper().startswith(_ENV_PREFIX) and "_" in name[len(_ENV_PREFIX):]:
            # `envscaler_rollout__min_steps=abc` was ignored without a word (outside check, 2026-11-26)
            right = _ENV_PREFIX + name[len(_ENV_PREFIX):].upper()
            raise ConfigError(f"invalid configuration: environment variable {name} is not read: the prefix is "
                              f"ENVSCALER_ in capitals (e.g. {right}); fix or unset it")
        if not name.startswith(_ENV_PREFIX) or name in _ENV_ALIASES:
            continue
        rest = name[len(_ENV_PREFIX):]
        # two underscores where the path has them, one where it has a single one: e.g. LLM__MODELS_AGENT
        path = spelled.get("_".join(k for k in rest.lower().split("__")))
        if path is None or "__".join(path) == rest.lower():
            continue
        right = _ENV_PREFIX + "__".join(path).upper()
        raise ConfigError(f"invalid configuration: environment variable {name} is not a setting variable; did you mean "
                          f"{right} ({'.'.join(path)})? Levels are separated by two underscores; fix or unset it")


def unpriced_models(settings: Settings) -> dict[str, str]:
    """Stage -> model, for the stages whose model has no entry in `llm.prices` (its calls cost 0)."""
    return {stage: model for stage, model in settings.llm.models.model_dump().items()
            if model not in settings.llm.prices}


def refuse_an_unpriced_budget(settings: Settings, path: str | Path | None = None,
                              named: dict[str, str] | None = None) -> None:
    """A cost budget never sees the calls of a model without a price: it would let the run spend without
    limit while the summary says $0. Refuse the configuration instead of warning in a log. `named`: models
    a command names another way than `llm.models` (setting -> model, e.g. `{"--model": "qwen3"}` of
    `eval bfcl-mt`), refused alike: an outside check found that flag's model ran with no cap."""
    if settings.budget.max_cost_usd is None:
        return
    missing = {f"llm.models.{stage}": model for stage, model in unpriced_models(settings).items()}
    missing |= {setting: model for setting, model in (named or {}).items() if model not in settings.llm.prices}
    if not missing:
        return
    models = sorted(set(missing.values()))
    stages = ", ".join(f"{setting}={model!r}" for setting, model in missing.items())
    entries = " ".join(f'[llm.prices."{m}"]' for m in models)
    where = f" in {path}" if path else ""
    raise ConfigError(f"invalid configuration{where}: budget.max_cost_usd={settings.budget.max_cost_usd} cannot see "
                      f"the calls of a model without a price ({stages}): they would cost 0 and the budget would never "
                      f"stop the run; add {entries} with input_per_mtok and output_per_mtok, or use budget.max_tokens")


def public_config(settings: Settings) -> dict[str, Any]:
    """Settings as JSON without secrets: what is stored on the run and passed as flow parameters
    (both end up in databases and dashboards). The API key comes back from the environment, as do
    extra_body's secrets (`secret_fields`); a URL's
    password and secret query parameters are masked (`mask_url`), and the real URL is remembered in this
    process only, so a flow run here (the CLI's) gets it back in `load_settings` (`unmask_urls`)."""
    data = settings.model_dump(mode="json", by_alias=True)
    data["llm"].pop("api_key", None)
    data["llm"].pop("embedding_api_key", None)
    data["llm"]["extra_body"] = masked_secrets(data["llm"].get("extra_body") or {}, remember=True)  # secret_fields
    for section, field in URL_SETTINGS:
        real = data.get(section, {}).get(field)
        if isinstance(real, str) and (masked := mask_url(real)) != real:
            remember_real_url(masked, real)
            data[section][field] = masked
    return data


def _unmask_extra_body(data: dict[str, Any], from_env: dict[str, Any]) -> None:
    """Stored runs and flow parameters hold extra_body's secrets masked: put back the real ones
    (`secret_fields.unmask_extra_body`), else a one-line ConfigError naming the field."""
    llm = data.get("llm")
    if not isinstance(llm, dict) or not isinstance(llm.get("extra_body"), dict):
        return
    given = (from_env.get("llm") or {}).get("extra_body")
    if isinstance(given, str):  # the whole body in ENVSCALER_LLM__EXTRA_BODY, as JSON text
        with contextlib.suppress(ValueError):
            given = json.loads(given)
    try:
        llm["extra_body"] = unmask_extra_body(llm["extra_body"], given)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None


def unmask_urls(data: dict[str, Any], environ: dict[str, Any]) -> None:
    """Flow parameters and stored runs hold masked URLs: put back the real one, from this process (it
    masked it) or from the environment of the process that runs the flow (e.g. a worker's
    ENVSCALER_DB_URL) when it masks to the same text; else a one-line ConfigError."""
    from_env, _ = _env_overrides(environ)
    for section, field in URL_SETTINGS:
        value = (data.get(section) or {}).get(field) if isinstance(data.get(section), dict) else None
        if not isinstance(value, str) or not is_masked(value):
            continue
        candidates = [remembered_real_url(value), (from_env.get(section) or {}).get(field)]
        real = next((c for c in candidates if isinstance(c, str) and c != value and mask_url(c) == value), None)
        if real is None:
            names = [name for name, path in _ENV_ALIASES.items() if path == (section, field)]
            names.append(f"{_ENV_PREFIX}{section.upper()}__{field.upper()}")
            raise ConfigError(f"{section}.{field}: {value} has its secret masked (flow parameters and stored runs "
                              f"never hold one); give the real URL to the process that runs the flow "
                              f"({' or '.join(names)} in its environment)")
        data[section][field] = real
