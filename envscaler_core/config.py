"""The factory's one configuration object (the only global-ish state we allow).

Sources, later ones win: built-in defaults < a config file (TOML, JSON or YAML) < environment
variables (`ENVSCALER_<SECTION>__<FIELD>`, plus the conventional `OPENAI_BASE_URL`/`OPENAI_API_KEY`
and `ENVSCALER_DB_URL`). Bad values fail with the field path in the message.
"""

from __future__ import annotations

import json
import os
import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ConfigError(ValueError):
    """A configuration problem, phrased for a one-line error message."""


class StageModels(_Section):
    """Model name per stage; any OpenAI-compatible endpoint serves them."""

    mine: str = "gpt-4.1"
    synth: str = "gpt-4.1"
    validate_test_state: str = "gpt-4.1"
    validate_proposer: str = "gpt-4.1-mini"
    validate_judge: str = "gpt-4.1-mini"
    scen: str = "gpt-4.1"
    check: str = "gpt-4.1-mini"
    agent: str = "gpt-4.1-mini"
    user_sim: str = "gpt-4.1"
    embedding: str = "text-embedding-3-large"


class Price(_Section):
    """USD per million tokens. `cached_input_per_mtok` prices the prompt tokens a provider serves from
    its prefix cache (`usage.prompt_tokens_details.cached_tokens`); unset, they cost the full input
    price (a provider without a cache discount, e.g. a self-hosted server billed by the hour)."""

    input_per_mtok: float = Field(ge=0)
    output_per_mtok: float = Field(ge=0)
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
    base_url: str | None = Field(default=None, description="OpenAI-compatible endpoint; None = the SDK default.")
    api_key: str | None = None
    models: StageModels = Field(default_factory=StageModels)
    timeout_s: float = Field(default=60.0, gt=0)
    max_retries: int = Field(default=6, ge=0, description="HTTP retries on 429/5xx/timeouts.")
    backoff_base_s: float = Field(default=0.5, gt=0)
    backoff_max_s: float = Field(default=30.0, gt=0)
    max_concurrency: int = Field(default=64, ge=1)
    requests_per_minute: int | None = Field(default=None, ge=1)
    repair_attempts: int = Field(default=2, ge=0, description="Structured-output repair turns; never unbounded.")
    max_output_tokens: int = Field(default=16384, ge=256, description=(
        "Ceiling of the output room asked for when a reply was cut off (finish_reason 'length') and is retried."))
    cache: bool = True
    prices: dict[str, Price] = Field(default_factory=_default_prices)


SandboxBackend = Literal["auto", "bwrap", "rlimit"]


class SandboxSettings(_Section):
    backend: SandboxBackend = "auto"
    allow_weak: bool = Field(default=False, description="Permit the rlimit-only backend when namespaces are unavailable.")
    workers: int | None = Field(default=None, ge=1, description="None = one per core.")
    call_timeout_s: float = Field(default=5.0, gt=0)
    python: str | None = Field(default=None, description="Absolute interpreter path readable by the sandbox uid.")


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


class StoreSettings(_Section):
    url: str = Field(default_factory=default_store_url,
                     description="Default: a DuckDB file under ENVSCALER_DATA_DIR (see `envscaler_data_dir`).")


class MineSettings(_Section):
    min_usefulness: int = Field(default=7, ge=1, le=10)
    min_modelability: int = Field(default=7, ge=1, le=10)
    similarity_threshold: float = Field(default=0.9, gt=0, le=1, description="Cosine at/above which topics are duplicates.")
    select_n: int = Field(default=20, ge=1, description="Topics kept by diversity selection.")
    selection: Literal["kmeans", "farthest_point"] = "farthest_point"
    seed: int = 42
    max_tasks: int | None = Field(default=None, ge=1, description="Cap on source tasks read (demo slices).")
    strict_sources: bool = Field(default=False, description="Any malformed source record stops the run before it starts.")


class SynthSettings(_Section):
    step_attempts: int = Field(default=3, ge=1, description="Attempts per synthesis step, error fed back.")


class ValidateSettings(_Section):
    mode: Literal["programmatic", "llm", "both"] = "both"
    rounds: int = Field(default=30, ge=1)
    chains: int = Field(default=3, ge=1, description=(
        "Independent proposer/judge chains the LLM rounds are split over (each its own episode from the "
        "test state, run at once): the pass is 2 x rounds / chains calls deep."))
    threshold: float = Field(default=0.85, ge=0, le=1)


class ScenSettings(_Section):
    per_env: int = Field(default=3, ge=1, description="Initial states (and so scenarios) per env.")
    repair_attempts: int = Field(default=2, ge=0)
    check_timeout_s: float = Field(default=2.0, gt=0)


class RolloutSettings(_Section):
    mode: Literal["non_conversational", "conversational"] = "non_conversational"
    per_scenario: int = Field(default=1, ge=1)
    max_steps: int = Field(default=30, ge=1)
    require_all_passed: bool = False
    max_tool_errors: int | None = Field(default=None, ge=0)
    min_steps: int = Field(default=1, ge=0)


class BudgetSettings(_Section):
    max_tokens: int | None = Field(default=None, ge=1)
    max_cost_usd: float | None = Field(default=None, gt=0)


class FlowSettings(_Section):
    """How the orchestrator cuts work: one Prefect task per batch, not per item (tasks cost ~25 ms)."""

    batch_size: int = Field(default=25, ge=1, description="Items per Prefect task.")
    batches_in_flight: int = Field(default=8, ge=1, description="Concurrent batch tasks per stage.")
    max_item_attempts: int = Field(default=3, ge=1, description="Tries per item across resumes before it is given up.")
    out_dir: str = Field(default="out", description="Where exports go: <out_dir>/<run_id>/.")


class Settings(_Section):
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
_ENV_PREFIX = "ENVSCALER_"


def _read_file(path: Path) -> dict[str, Any]:
    if not path.is_file():
        raise ConfigError(f"config file not found: {path}")
    text = path.read_text(encoding="utf-8")
    try:
        if path.suffix == ".toml":
            data = tomllib.loads(text)
        elif path.suffix == ".json":
            data = json.loads(text)
        elif path.suffix in (".yaml", ".yml"):
            import yaml  # installed with prefect

            data = yaml.safe_load(text) or {}
        else:
            raise ConfigError(f"{path}: unsupported config format {path.suffix!r} (use .toml, .json or .yaml)")
    except (tomllib.TOMLDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError(f"{path}: not valid {path.suffix[1:]}: {exc}") from exc
    except ImportError as exc:  # pragma: no cover - yaml always present with prefect
        raise ConfigError(f"{path}: YAML needs PyYAML installed") from exc
    except Exception as exc:
        if isinstance(exc, ConfigError):
            raise
        raise ConfigError(f"{path}: cannot parse: {exc}") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: top level must be a mapping of sections, got {type(data).__name__}")
    return data


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
        if environ.get(name):
            _set_path(data, list(path), environ[name])
            origin[path] = name
    for name, value in environ.items():
        if name.startswith(_ENV_PREFIX) and "__" in name:
            keys = [k.lower() for k in name[len(_ENV_PREFIX):].split("__")]
            _set_path(data, keys, value)
            origin[tuple(keys)] = name
    return data, origin


def _merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


def load_settings(path: str | Path | None = None, environ: dict[str, str] | None = None,
                  overrides: dict[str, Any] | None = None) -> Settings:
    """Build Settings from defaults, an optional file, the environment and explicit `overrides`
    (CLI flags, later wins); raise ConfigError with the offending field path (e.g.
    `validate.threshold: Input should be less than or equal to 1`)."""
    data: dict[str, Any] = _read_file(Path(path)) if path else {}
    env = dict(os.environ if environ is None else environ)
    from_env, origin = _env_overrides(env)
    data = _merge(data, from_env)
    data = _merge(data, overrides or {})
    try:
        return Settings.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(_describe(exc, path, {k: (v, env[v]) for k, v in origin.items()}, overrides or {})) from None


def _describe(exc: ValidationError, path: str | Path | None, origin: dict[tuple[str, ...], tuple[str, str]],
              overrides: dict[str, Any]) -> str:
    """Name where each bad value came from: the environment variable that set it, else the file."""
    problems, from_file = [], False
    for err in exc.errors():
        loc = tuple(str(p) for p in err["loc"])
        field = ".".join(loc)
        var = next((named for keys, named in origin.items() if loc[:len(keys)] == keys), None)
        if var is not None and not _overridden(overrides, loc):
            problems.append(f"{field}: {err['msg']} (from environment variable {var[0]}={var[1]!r}; fix or unset it)")
        else:
            from_file = True
            problems.append(f"{field}: {err['msg']}")
    where = f" in {path}" if path and from_file else ""
    return f"invalid configuration{where}: " + "; ".join(problems)


def _overridden(overrides: dict[str, Any], loc: tuple[str, ...]) -> bool:
    node: Any = overrides
    for key in loc:
        if not isinstance(node, dict) or key not in node:
            return False
        node = node[key]
    return True


def public_config(settings: Settings) -> dict[str, Any]:
    """Settings as JSON without secrets: what is stored on the run and passed as flow parameters
    (both end up in databases and dashboards). The API key comes back from the environment."""
    data = settings.model_dump(mode="json", by_alias=True)
    data["llm"].pop("api_key", None)
    return data
