"""The contract between the core and whatever executes environment code.

Core logic (validation, scenario verification, rollouts, gym/MCP adapters) never imports the sandbox:
it receives an `EnvRuntime`. The production implementation is `sandbox.SandboxPool` (subprocess
jails); anything else that honours these types works, which keeps core logic free of process
management. Calls are synchronous; async callers use `asyncio.to_thread`.
"""

from __future__ import annotations

from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

ErrorKind = Literal[
    "schema",          # rejected before running: unknown/private tool, missing/extra/ill-typed argument
    "exception",       # the tool raised; `error` carries the exception and a traceback tail
    "timeout",         # wall-clock or CPU limit; the worker was killed and replaced
    "crash",           # the worker died (signal, memory blow-up, garbage on the wire)
    "unserializable",  # the state after the call is not JSON-serialisable; previous state kept
    "oversize",        # reply or state exceeded its size cap
]


class CallOutcome(BaseModel):
    """One tool call. `ok` means the method ran and returned (whatever its `success` key says)."""

    model_config = ConfigDict(extra="forbid")

    tool: str
    ok: bool
    result: Any = None
    error: str | None = None
    error_kind: ErrorKind | None = None
    state: dict[str, Any] = Field(default_factory=dict, description="State after the call (unchanged on error).")
    state_diff: dict[str, Any] = Field(default_factory=dict)
    elapsed_ms: float = 0.0


class CheckOutcome(BaseModel):
    """One check function on (initial_state, final_state). `passed=None`: not scored (error)."""

    model_config = ConfigDict(extra="forbid")

    passed: bool | None
    error: str | None = None
    elapsed_ms: float = 0.0


class EnvLoadError(Exception):
    """The code does not compile, the class is missing, or the initial state is rejected."""


class EpisodeBreach(Exception):
    """Reading an episode's state after its process was caught sending frames the host never asked for:
    its replies (results and states, earlier ones included) may be forged, so nothing from it may be
    scored or shown as its outcome. Readers treat the episode as crashed; the message says why."""


def _summary(value: Any) -> str:
    if isinstance(value, dict | list):
        return f"{type(value).__name__} of {len(value)} entr{'y' if len(value) == 1 else 'ies'}"
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def config_not_loaded(config: dict[str, Any] | None, state: dict[str, Any],
                      set_as_given: set[str] = frozenset()) -> str | None:  # type: ignore[assignment]
    """Why a freshly loaded state does not hold the config it was loaded from, or None.

    Loading sets every top-level key of the config as an attribute, so each public key must come back
    unchanged; when it does not (a property, a `__setattr__` or `__slots__` swallowing it), the env
    would silently run on other data than the scenario describes. Keys starting with `_` are private
    attributes, which are not part of the state, so they cannot be checked here. `set_as_given`: keys
    whose attribute the loader saw to be the very object it set; the constructor shares that copy (as
    in EnvScaler's runtime) and may have changed it in place, sorting a list or filling defaults, which
    is the class's own normalisation, not a key it swallowed."""
    for key, value in (config or {}).items():
        if key.startswith("_") or (key in set_as_given and key in state):
            continue
        if key not in state:
            return f"attribute {key!r} is missing after loading (the config gives {_summary(value)})"
        if state[key] != value:
            return (f"attribute {key!r} holds {_summary(state[key])} after loading, "
                    f"but the config gives {_summary(value)}")
    return None


class Episode(Protocol):
    @property
    def state(self) -> dict[str, Any]:
        """The last committed state; raises EpisodeBreach once the episode is known to have forged replies."""
        ...

    def call(self, tool: str, args: dict[str, Any]) -> CallOutcome: ...

    def close(self) -> None: ...


class EnvRuntime(Protocol):
    def open_episode(
        self,
        code: str,
        class_name: str,
        initial_state: dict[str, Any] | None,
        tools: list[dict[str, Any]] | None = None,
    ) -> Episode:
        """Load `class_name` from `code` with `initial_state` as init_config; raise EnvLoadError.
        With `tools` (OpenAI schemas), calls are checked against them before running."""
        ...

    def run_checks(
        self,
        checks: list[str],
        initial_state: dict[str, Any],
        final_state: dict[str, Any],
        timeout_s: float | None = None,
    ) -> list[CheckOutcome]:
        """Run each `check_func(final_state)` source with `initial_state` as a global."""
        ...
