"""The contract between the core and whatever executes environment code.

Core logic (validation, scenario verification, rollouts, gym/MCP adapters) never imports the sandbox:
it receives an `EnvRuntime`. The production implementation is `sandbox.SandboxPool` (subprocess
jails); anything else that honours these types works, which keeps core logic free of process
management. Calls are synchronous; async callers use `asyncio.to_thread`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

if TYPE_CHECKING:
    from envscaler_core.models.env import AcceptedEnv

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
    state: dict[str, Any] = Field(default_factory=dict, description=(
        "State after the call: unchanged on error, but for the change a raising tool kept under EnvScaler's "
        "episode rules (then in `state_diff` too)."))
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


STATE_NOT_LOADED = "initial state did not load"
"""How the load error of a class that loaded but whose state lacks what EnvScaler would set begins."""


def load_failure(error: EnvLoadError | str) -> str:
    """`error` as the reason a scenario's initial state does not load, saying so once (the sandbox's own
    message may already begin with STATE_NOT_LOADED; it used to read "does not load: ... did not load")."""
    text = str(error)
    return text if text.startswith(STATE_NOT_LOADED) else f"initial state does not load: {text}"


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
                      set_as_given: set[str] = frozenset(),  # type: ignore[assignment]
                      consumed: set[str] = frozenset(),  # type: ignore[assignment]
                      rewritten: list[str] | tuple[str, ...] = ()) -> str | None:
    """Why a freshly loaded state does not hold what EnvScaler's runtime would have set, or None.

    EnvScaler constructs the class with a copy of the config and then sets every top-level key of THAT
    copy, as the constructor left it, as an attribute; a key whose value does not come back (a property,
    a `__setattr__` or `__slots__` swallowing it) means the env would silently run on other data than
    EnvScaler's would. The loader (sandbox/jail_load.py) reports what the constructor did to the copy:
    `set_as_given`, keys whose attribute is the very object set (the constructor may have changed it in
    place, sorting a list or filling defaults: its own normalisation); `consumed`, keys it took out of
    the copy (pop, del, clear), which EnvScaler never sets, so nothing of theirs can be lost; `rewritten`,
    keys whose value it replaced (or added) and whose attribute kept neither that value nor an equal one:
    lost. Other keys must come back equal to the config. Keys starting with `_` are private attributes,
    which are not part of the state, so they cannot be checked here."""
    for key in rewritten:
        if not key.startswith("_"):
            held = f"holds {_summary(state[key])}" if key in state else "is missing"
            return (f"attribute {key!r} {held} after loading, not the value the constructor left for it in the "
                    "config, which EnvScaler's runtime sets as the attribute")
    for key, value in (config or {}).items():
        if key.startswith("_") or key in consumed or (key in set_as_given and key in state):
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
        *,
        rules: str = "factory",
    ) -> Episode:
        """Load `class_name` from `code` with `initial_state` as init_config; raise EnvLoadError.
        With `tools` (OpenAI schemas), calls are checked against them before running. `rules`: the env's
        `episode_rules`; "envscaler" plays EnvScaler's `step` (a result JSON cannot carry is observed as its
        text, a raising tool's state is kept)."""
        ...

    def run_checks(
        self,
        checks: list[str],
        initial_state: dict[str, Any],
        final_state: dict[str, Any],
        timeout_s: float | None = None,
        repeat: int = 0,
    ) -> list[CheckOutcome]:
        """Run each `check_func(final_state)` source with `initial_state` as a global. `repeat`: 0 runs them
        under every episode's PYTHONHASHSEED; k > 0 under another seed the runtime drew at random for repeat
        k, so a check's repeated evaluations see strings hash, and sets of them iterate, as other processes
        would, and no check can be tuned to the seeds (scenarios/determinism.py)."""
        ...


def open_env_episode(runtime: EnvRuntime, env: AcceptedEnv, state: dict[str, Any] | None) -> Episode:
    """An episode of an accepted env on `state`: its class, its tool schemas and its episode rules. Every
    reader of an env's rewards (verification, state checks, rollouts, the gym, serve-mcp) opens it here, so
    none of them plays another rule set than the one the reward was verified under (an imported env's
    reference solution once ran under the factory's rules while the gym paid it under EnvScaler's)."""
    tools = env.tools
    if env.episode_rules == "envscaler":
        # a class constant or property the source shows is data is offered (EnvScaler offers it) but never run,
        # on any path: validation does not probe it, so the sandbox must not call what it hides (rt14-A F2)
        from envscaler_core.rollout.rules import no_method_tools

        data = no_method_tools(env.class_code, env.class_name, [t.function.name for t in tools])
        tools = [t for t in tools if t.function.name not in data]
    return runtime.open_episode(env.class_code, env.class_name, state,
                                tools=[t.model_dump(mode="json") for t in tools], rules=env.episode_rules)
