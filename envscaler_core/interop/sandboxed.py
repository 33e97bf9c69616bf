"""EnvScaler's runtime contract on the sandbox's own primitives: one episode per load or replay, one
isolation unit per check (`EnvRuntime.open_episode`, `EnvRuntime.run_checks`).

Imported EnvScaler data is untrusted, so nothing of one scenario shares a process with another: each
(env, scenario) load or replay is its own sandbox episode, and every check function runs in its own
unit, where it can only change its own verdict. What EnvScaler's loader needs beyond plain JSON (its
`__type__` markers) travels as marker JSON and is restored inside the unit by `jail_side`, whose
source is appended to the env code or wrapped around the check (`env_code`, `check_source`).

The host adds concurrency over the pool (`parallel`) and a `Breaker`: kill and check-timeout
bookkeeping for one scenario's work (its load, replays and checks), never shared between scenarios,
since one scenario's loops must not shorten another's limits or skip its loads. A class that hangs
on every load is caught by the env's own load with an empty config (`envjob`), which rejects it once.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, Field

from envscaler_core.interop import jail_side
from envscaler_core.models.scenario import ToolCall
from envscaler_core.runtime import CheckOutcome, EnvLoadError, EnvRuntime, Episode, EpisodeBreach
from envscaler_core.scenarios.determinism import CHECK_REPEATS, is_nondeterministic, repeated
from envscaler_core.rollout.chat_call import chat_call
from envscaler_core.wire_values import MAX_STATE_VALUES, value_problem

ENDED_BY_RESERVED = ("the message to the user (a name EnvScaler's runtime reserves): it ends the episode there and "
                     "never runs the method, so no later call runs either")

JAIL_SIDE_SOURCE = Path(jail_side.__file__).read_text(encoding="utf-8")
MARKER = '"__type__"'
KILLED = ("timeout", "crash")
MAX_KILLS = 3
"""Loads or replays of one env the sandbox had to kill before the rest of that env is not run."""
SHORT_LEASH_S = 0.25
"""Check timeout once `MAX_KILLS` checks of one env have timed out (a file whose every check loops)."""

T = TypeVar("T")
R = TypeVar("R")


def env_code(code: str, class_name: str, public_only: bool = False) -> str:
    """The env code plus the marker adapter (after it, so the env's line numbers are unchanged).
    `public_only`: the state leaves `_private` attributes out, as the factory's own episodes do (our
    validation of an env on a config with markers); else it is EnvScaler's state (the audit)."""
    return (f"{code}\n\n\n# --- appended by the EnvScaler importer: type markers in and out (docs/interop.md) ---\n"
            "def _envscaler_interop_install(class_name, source):\n"
            "    namespace = {'__name__': 'envscaler_interop'}\n"
            "    exec(compile(source, '<envscaler-interop>', 'exec', dont_inherit=True), namespace)\n"
            f"    namespace['install'](globals(), class_name, public_only={public_only!r})\n"
            f"_envscaler_interop_install({class_name!r}, {JAIL_SIDE_SOURCE!r})\n"
            "del _envscaler_interop_install\n")


def _open(runtime: EnvRuntime, code: str, class_name: str, init: dict[str, Any]) -> Episode:
    """`open_episode` on the adapted code (the env's own class, its hooks kept off it)."""
    return runtime.open_episode(env_code(code, class_name), class_name, init)


def check_source(source: str, with_markers: bool) -> str:
    """The check as EnvScaler runs it; around it, when the states hold markers, their restoration."""
    if not with_markers or not isinstance(source, str):
        return source
    return ("def _envscaler_interop_check(source, helper):\n"
            "    namespace = {'__name__': 'envscaler_interop'}\n"
            "    exec(compile(helper, '<envscaler-interop>', 'exec', dont_inherit=True), namespace)\n"
            "    return namespace['marker_check'](source, initial_state, __builtins__)\n"
            f"check_func = _envscaler_interop_check({source!r}, {JAIL_SIDE_SOURCE!r})\n")


def canonical(config: Any) -> dict[str, Any]:
    """The config as the unit will report it back (set members sorted, plain dicts unmarked), so the
    sandbox's did-it-load comparison holds for marker values. Raises ValueError on a broken marker."""
    if config is None:
        return {}
    problem = value_problem(config, "init_config", max_nodes=MAX_STATE_VALUES)
    if problem:  # before any set is built on the host: wide ints could be chosen to share one hash (F2)
        raise ValueError(problem)
    try:
        value = jail_side.save_markers(jail_side.restore_markers(config))
    except (TypeError, ValueError, AttributeError, ArithmeticError) as exc:
        raise ValueError(f"init_config cannot be restored from EnvScaler's type markers: {type(exc).__name__}: {exc}") from None
    if not isinstance(value, dict):
        raise ValueError(f"init_config is a {type(config).__name__}, not an object")
    return value


def has_markers(*states: Any) -> bool:
    return any(MARKER in json.dumps(s, ensure_ascii=False) for s in states)


_LOST = {"dict": "dict keys that are not strings (an int key 1 becomes \"1\" there, so `.get(1)` finds nothing)",
         "key": "dict keys that are not strings (an int key 1 becomes \"1\" there, so `.get(1)` finds nothing)",
         "set": "sets (lists there)", "tuple": "tuples (lists there)", "datetime": "datetimes (ISO strings there)",
         "decimal": "Decimals (strings there)", "float": "non-finite floats"}


def lost_when_flattened(state: Any) -> list[str]:
    """What of a marker-JSON state the factory's plain-JSON form cannot keep, one phrase per kind, in
    order of first appearance: why a scenario verified in the faithful form can fail in the served one
    (round-trip check 4, F5: a tool storing `self.bookings[1]` left its reason saying only "still False")."""
    found: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            phrase = _LOST.get(value.get("__type__")) if isinstance(value.get("__type__"), str) else None
            if phrase and phrase not in found:
                found.append(phrase)
            for v in value.values():
                walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)

    walk(state)
    return found


def private_reads(state: Any, sources: Sequence[Any]) -> list[str]:
    """The `_private` attributes of a state that some check's source names: the factory's states leave them
    out, so such a check finds nothing in the served form (interop re-check, F6c: that loss was the one kind
    not named in the reason a scenario was not promoted)."""
    names = [k for k in (state if isinstance(state, dict) else {}) if isinstance(k, str) and k.startswith("_")]
    read = [n for n in names if any(isinstance(src, str) and n in src for src in sources)]
    if not read:
        return []
    return [f"private attributes a check reads ({', '.join(read[:3])}): the factory's states leave out "
            "`_`-prefixed attributes"]


def with_markers_restored(candidate: Any, config: dict[str, Any], always: bool = False) -> tuple[Any, dict[str, Any]]:
    """A candidate (`EnvCandidate`) and test config to validate with, such that the class gets the
    config's type markers restored (sets as sets, tuple keys as tuples), as EnvScaler's `read_file`
    gives them, and its state is reported back with markers (a `set()` its own `__init__` makes is a
    set marker, not an unserialisable state): the marker adapter appended to its code (public state
    only, as our own episodes) and the config in canonical marker form. A config without markers is
    returned as it is unless `always` (the import's audit and `validate --state`: whether a class is
    accepted must not depend on whether the state it is tried on happens to hold a marker, outside
    check F4). ValueError on a broken marker."""
    if not always and not has_markers(config):
        return candidate, config
    code = env_code(candidate.class_code, candidate.class_name, public_only=True)
    return candidate.model_copy(update={"class_code": code}), canonical(config)


class Loaded(BaseModel):
    """A scenario's initial state as EnvScaler's runtime would build it (marker JSON), or why not."""

    state: dict[str, Any] | None = None
    error: str | None = None
    killed: bool = False


class Replayed(BaseModel):
    """A replay EnvScaler's way: per call `ok`, `invalid` (its runtime rejects it, also a `chat_with_user`
    without `content`), `raised` (its runtime ends the episode there, reward 0), `ended` (`chat_with_user`
    with `content`: its runtime ends the episode there without running anything, so no later call has a
    status) or `crashes` (`chat_with_user` content its runtime crashes on, `rollout/chat_call.py`), and
    the final state; `error` when the episode itself failed. `beyond`: the call leaves a state the sandbox's
    wire cannot carry (`unserializable`: deeper than its 64 levels, an object, ...), which EnvScaler's
    runtime keeps: our limit, not a call its runtime refuses (`beyond_the_wire`)."""

    statuses: list[str] = Field(default_factory=list)
    errors: list[str | None] = Field(default_factory=list)
    state: dict[str, Any] | None = None
    error: str | None = None
    killed: bool = False


class Breaker:
    """One scenario's bookkeeping (thread-safe): kills and check timeouts seen so far. Give every
    scenario its own: a breaker shared across scenarios lets one scenario's loops change another's verdict."""

    def __init__(self, check_timeout_s: float) -> None:
        self.kills: list[str] = []
        self.check_timeouts = 0
        self.check_timeout_s = check_timeout_s
        self._lock = threading.Lock()

    def tripped(self) -> str | None:
        with self._lock:
            if len(self.kills) < MAX_KILLS:
                return None
            return f"not run: the sandbox killed {len(self.kills)} earlier episodes of this env ({'; '.join(self.kills)})"

    def killed(self, why: str) -> None:
        with self._lock:
            self.kills.append(why[:200])

    def timeouts(self, outcomes: Sequence[CheckOutcome]) -> None:
        with self._lock:
            self.check_timeouts += sum(1 for o in outcomes if (o.error or "").startswith("timeout"))
            if self.check_timeouts >= MAX_KILLS:
                self.check_timeout_s = min(self.check_timeout_s, SHORT_LEASH_S)


def _kind_of(error: str) -> str:
    """'timeout'/'crash' when the sandbox killed the unit (its messages start with the kind)."""
    head = error.split(":", 1)[0].strip()
    return head if head in KILLED else ""


def _load_error(exc: EnvLoadError) -> tuple[str, bool]:
    text = str(exc)
    killed = any(f"failed: {k}:" in text for k in KILLED)
    return text, killed


def load_state(runtime: EnvRuntime, code: str, class_name: str, config: Any, breaker: Breaker) -> Loaded:
    """One sandbox episode: EnvScaler's loader on `config`, the state read back, the episode closed."""
    tripped = breaker.tripped()
    if tripped:
        return Loaded(error=tripped, killed=True)
    try:
        init = canonical(config)
    except ValueError as exc:
        return Loaded(error=str(exc))
    try:
        episode = _open(runtime, code, class_name, init)
    except EnvLoadError as exc:
        text, killed = _load_error(exc)
        if killed:
            breaker.killed(text)
        return Loaded(error=text, killed=killed)
    try:
        return Loaded(state=episode.state)
    except EpisodeBreach as exc:  # a crash: its state may be forged
        text = f"crash: the env's process forged replies: {exc}"
        breaker.killed(text)
        return Loaded(error=text, killed=True)
    finally:
        episode.close()


def replay(runtime: EnvRuntime, code: str, class_name: str, config: Any, calls: Sequence[ToolCall],
           breaker: Breaker) -> Replayed:
    """One sandbox episode: load, then each call as EnvScaler's `step` would run it."""
    tripped = breaker.tripped()
    if tripped:
        return Replayed(error=tripped, killed=True)
    try:
        init = canonical(config)
        episode = _open(runtime, code, class_name, init)
    except ValueError as exc:
        return Replayed(error=str(exc))
    except EnvLoadError as exc:
        text, killed = _load_error(exc)
        if killed:
            breaker.killed(text)
        return Replayed(error=text, killed=killed)
    out = Replayed()
    try:
        for call in calls:
            chat = chat_call(call.tool, call.args)  # EnvScaler's step never runs a method of that name
            if chat is not None and chat.kind == "invalid":  # its check_vaild_action: the episode goes on
                out.statuses.append("invalid")
                out.errors.append(chat.why)
                continue
            if chat is not None:  # "ends" the episode there, or "crashes" its runtime: no later call runs
                out.statuses.append("ended" if chat.kind == "ends" else "crashes")
                out.errors.append(ENDED_BY_RESERVED if chat.kind == "ends" else chat.why)
                break
            outcome = episode.call(call.tool, call.args)
            if outcome.ok:
                out.statuses.append("ok")
                out.errors.append(None)
                continue
            error = outcome.error or outcome.error_kind or "failed"
            unknown = outcome.error_kind == "schema" and error.startswith(("unknown tool", f"{call.tool!r} is private",
                                                                           f"{call.tool!r} is a dunder"))
            beyond = outcome.error_kind == "unserializable"
            out.statuses.append("invalid" if unknown else "beyond" if beyond else "raised")
            out.errors.append(None if unknown else f"{outcome.error_kind}: {error}")
            if outcome.error_kind in KILLED:
                breaker.killed(f"{outcome.error_kind}: {error}")
        out.state = episode.state
        return out
    except EpisodeBreach as exc:  # a crash: the statuses above and the state may be forged
        text = f"crash: the env's process forged replies: {exc}"
        breaker.killed(text)
        return Replayed(error=text, killed=True)
    finally:
        episode.close()


def beyond_the_wire(calls: Sequence[ToolCall], result: Replayed) -> str | None:
    """Why a reference solution cannot be proven here when one of its calls leaves a state the sandbox's wire
    cannot carry (a `beyond` status), naming that limit as ours; None when no call does. EnvScaler's runtime
    keeps such a state and runs the call: the reason blamed its runtime ("no call EnvScaler's runtime
    accepts") for `grow(300)` on a 50-level tree, which EnvScaler plays at 1.0 (outside check rt22-R13, F5)."""
    if "beyond" not in result.statuses:
        return None
    at = result.statuses.index("beyond")
    error = result.errors[at] or "unserializable"
    return (f"the reference solution's call {at + 1} of {len(calls)}, {calls[at].tool}, leaves a state the sandbox "
            f"cannot carry ({error[:160] + ('...' if len(error) > 160 else '')}): a limit of the sandbox's state wire "
            "(docs/sandbox.md, Wire: 64 levels, 64-bit integers, plain JSON values), not of EnvScaler's runtime, "
            "which runs the call (docs/interop.md, Known limits)")


def run_checks(runtime: EnvRuntime, sources: Sequence[Any], initial: dict[str, Any], final: dict[str, Any],
               breaker: Breaker, repeats: int = CHECK_REPEATS) -> list[CheckOutcome]:
    """Every check in its own unit (`EnvRuntime.run_checks`), on restored states when they hold markers,
    `repeats` times in fresh units: one whose code breaks the rule of `determinism.py`, or whose evaluations
    differ, is a NONDETERMINISTIC error (`scenarios/determinism.py`; EnvScaler itself runs it once)."""
    markers = has_markers(initial, final)

    def run(wrapped: list[Any], seed: int) -> list[CheckOutcome]:
        outcomes = runtime.run_checks(wrapped, initial, final, breaker.check_timeout_s, repeat=seed)
        breaker.timeouts(outcomes)
        return outcomes

    return repeated([check_source(s, markers) for s in sources], run, repeats, static=sources)


def raw_result(outcome: CheckOutcome) -> dict[str, Any]:
    """A check outcome in the form `classify` reads: `{"kind": "ok"|"not_bool"|"nondeterministic"|"error", "v", "error"}`."""
    if outcome.passed is not None:
        return {"kind": "ok", "v": outcome.passed}
    error = outcome.error or "check failed"
    if is_nondeterministic(error):
        return {"kind": "nondeterministic", "v": None, "error": error}
    if error.startswith("check_func returned "):
        return {"kind": "not_bool", "v": None, "error": error}
    if error.startswith("the source defines no callable check_func"):
        error = "Function 'check_func' not found."
    return {"kind": "error", "v": None, "error": error}


def parallel(fn: Callable[[T], R], items: Sequence[T], threads: int) -> list[R]:
    """`fn` over `items` on up to `threads` threads, results in order (the pool is thread-safe)."""
    if threads <= 1 or len(items) <= 1:
        return [fn(item) for item in items]
    with ThreadPoolExecutor(max_workers=min(threads, len(items)), thread_name_prefix="interop") as pool:
        return list(pool.map(fn, items))
