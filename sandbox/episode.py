"""One episode: one isolation unit holding one live instance of the env class.

Calls share that instance. What the host keeps is the last committed state (the instance's public
attributes as JSON); if the unit times out, crashes or sends anything the wire rules refuse, it is
killed and the next call runs in a fresh unit rebuilt from `cls(initial_state)` with the public
attributes overwritten by that state. Nothing the unit sends can raise out of `call`, `open_episode`
(which raises only EnvLoadError) or `state`: replies are checked for shape and caps here, after
frames.py has parsed them under the wire rules.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from envscaler_core.runtime import CallOutcome, EnvLoadError, config_not_loaded
from sandbox.child import Child, ChildFailure, encode
from sandbox.diff import state_diff
from sandbox.schema import check_call, index_tools
from sandbox.zygote import ZygoteError

if TYPE_CHECKING:
    from sandbox.pool import SandboxPool

log = logging.getLogger("sandbox")
ERROR_KINDS = {"schema", "exception", "timeout", "crash", "unserializable", "oversize"}
MAX_ERROR_CHARS = 4000
OUTPUT_SLACK = 100  # the worker appends "[... N characters dropped]" to capped output


class Garbage(Exception):
    """A reply that the worker, unsubverted, would never send; `kind` is the verdict it earns."""

    def __init__(self, message: str, kind: str = "crash") -> None:
        super().__init__(message)
        self.kind = kind


def _clone(state: dict[str, Any]) -> dict[str, Any]:
    """Outcomes get their own copy: a consumer mutating one must not corrupt the next diff."""
    return json.loads(json.dumps(state))


class SandboxEpisode:
    def __init__(self, pool: SandboxPool, code: str, class_name: str, initial_state: dict[str, Any] | None,
                 tools: list[dict[str, Any]] | None, *, spare: bool = False, child: Child | None = None,
                 load_calls: Callable[[dict[str, Any] | None], int] | None = None) -> None:
        """`spare`: the unit also holds a clean spare process (`open_spare`). `child`: a unit member to
        load in instead of a new unit (a spare); a restart after a crash always gets a new unit.
        `load_calls(restore)`: a load may take as long as this many calls (`restore` is None for the first
        load, else the state being rebuilt), for classes whose load replays work: a BFCL episode re-runs
        its calls after a crash, its checker runs every call of a task. Default: one call's limit."""
        if not isinstance(code, str) or not code.strip():
            raise EnvLoadError("the env code is empty")
        if not isinstance(class_name, str) or not class_name.isidentifier():
            raise EnvLoadError(f"class name {class_name!r} is not a Python identifier")
        if initial_state is not None and not isinstance(initial_state, dict):
            raise EnvLoadError(f"the initial state must be a JSON object, got {type(initial_state).__name__}")
        try:
            encode(initial_state)
        except (TypeError, ValueError, RecursionError) as exc:
            raise EnvLoadError(f"the initial state is not JSON-serialisable: {exc}") from None
        self._pool, self._code, self._class_name, self._initial = pool, code, class_name, initial_state
        self._index = index_tools(tools) if tools is not None else None
        self._timeout = pool.settings.call_timeout_s
        self._load_calls = load_calls
        self._limits = pool.limits
        self._lock = threading.Lock()
        self._child: Child | None = None
        self._kind = "pair" if spare else "episode"
        self._given = child
        self._state: dict[str, Any] = {}
        self._closed = False
        self.last_output = ""  # print() output of the last call (capped); not part of CallOutcome
        self.restarts = 0
        try:
            self._start(restore=None)
        except EnvLoadError:
            raise
        except Exception as exc:  # noqa: BLE001 - a sandbox bug must still be one clear load error
            log.exception("sandbox: unexpected error while loading %s", class_name)
            raise EnvLoadError(f"loading {class_name} failed: internal sandbox error: {type(exc).__name__}: "
                               f"{exc}") from None

    # -- loading --------------------------------------------------------------------------------
    def _start(self, restore: dict[str, Any] | None) -> None:
        """Start a unit and load the class (restoring `restore` if given); raises EnvLoadError.

        A load that crashes although the code may be fine (the unit died, garbage) makes the pool
        health-check that zygote; if the zygote was at fault it is replaced and the load runs once more."""
        budget = self._timeout * (1 if self._load_calls is None else max(1, self._load_calls(restore)))
        msg = encode({"op": "load", "code": self._code, "class_name": self._class_name, "init": self._initial,
                      "restore": restore, "cpu_s": self._timeout})  # the per-call window of later calls
        for attempt in (1, 2):
            try:
                given, self._given = self._given, None
                if given is not None:
                    child = given
                    child.set_freeze(True)
                else:
                    child = self._pool.spawn_child(freeze_between_calls=True, kind=self._kind)
            except ZygoteError as exc:
                raise EnvLoadError(f"the sandbox could not start a unit for {self._class_name}: {exc}") from None
            try:
                reply = child.exchange(msg, budget)
            except ChildFailure as exc:
                # the unit's jail may have been replaced meanwhile (by the ready-unit keeper or another
                # episode's heal), which kills its units: that is no verdict on the code, so load again
                replaced = not child.zygote.serving(child.generation)
                if exc.kind == "crash" and attempt == 1 and (replaced or self._pool.heal(child.zygote)):
                    continue
                raise EnvLoadError(f"loading {self._class_name} failed: {exc.kind}: {exc.message}") from None
            break
        if reply.get("ok") is not True:
            child.kill()
            raise EnvLoadError(str(reply.get("error") or "the worker sent an invalid load reply")[:MAX_ERROR_CHARS])
        loaded = reply.pop("loaded", [])
        try:
            if not isinstance(loaded, list) or not all(isinstance(k, str) for k in loaded):
                raise Garbage("'loaded' is not a list of keys")
            state = self._checked(reply, state_required=True, reply_bytes=child.last_reply_bytes)
        except Garbage as exc:
            child.kill()
            raise EnvLoadError(f"loading {self._class_name} failed: crash: garbage on the wire ({exc})") from None
        problem = None if restore is not None else config_not_loaded(self._initial, state, set_as_given=set(loaded))
        if problem:
            child.kill()
            raise EnvLoadError(f"initial state did not load: {problem}")
        self._child, self._state = child, state
        self.last_output = reply["output"]

    def _checked(self, reply: dict[str, Any], state_required: bool, reply_bytes: int) -> dict[str, Any] | None:
        """The reply's new state (None: unchanged) after checking its shape and caps; raises Garbage."""
        allowed = {"ok", "result", "output", "state"}
        if set(reply) - allowed:
            raise Garbage(f"unexpected keys {sorted(set(reply) - allowed)[:5]}")
        output = reply.get("output")
        if not isinstance(output, str) or len(output) > self._limits.output_cap + OUTPUT_SLACK:
            raise Garbage("output is not a string within the output cap")
        state = reply.get("state")
        unchanged = state is None and not state_required and "state" not in reply
        if not unchanged and not isinstance(state, dict):
            raise Garbage("state is not an object")
        if reply_bytes > min(self._limits.state_cap, self._limits.result_cap):  # else no part can be over a cap
            # Both caps hold whether or not the reply carries a state (a forged reply without one once
            # brought a 4 MiB result back as ok=True).
            size = _serialised_size(reply.get("result"))
            if size > self._limits.result_cap:
                raise Garbage(f"result of {size} characters is over the result cap of {self._limits.result_cap}",
                              "oversize")
            size = 0 if unchanged else _serialised_size(state)
            if size > self._limits.state_cap:
                raise Garbage(f"state of {size} characters is over the state cap of {self._limits.state_cap}",
                              "oversize")
        return None if unchanged else state

    # -- calls ----------------------------------------------------------------------------------
    @property
    def host_pid(self) -> int | None:
        """Host pid of the process running this episode's code now (None until the next call after a
        crash); for diagnostics and tests that watch it from outside."""
        child = self._child
        return None if child is None else child.host_pid

    @property
    def state(self) -> dict[str, Any]:
        with self._lock:
            return _clone(self._state)

    def open_spare(self, code: str, class_name: str, initial_state: dict[str, Any] | None,
                   tools: list[dict[str, Any]] | None = None,
                   load_calls: Callable[[dict[str, Any] | None], int] | None = None) -> SandboxEpisode:
        """Another episode, in a process that has run nothing of this one: the spare of this episode's unit
        when it was opened with `spare=True` and the spare is alive and unused (a fork, no new unit), else a
        new unit. Either way this episode's calls cannot reach it; meanwhile this episode's process stays
        stopped until its next call. Raises EnvLoadError like `open_episode`."""
        with self._lock:
            member = self._child
            spare = member.take_spare() if member is not None else None
            if member is not None:
                member.freeze_now()
        if spare is not None and not spare.zygote.serving(spare.generation):
            self._pool.release(spare)
            spare = None
        return SandboxEpisode(self._pool, code, class_name, initial_state, tools, child=spare, load_calls=load_calls)

    def call(self, tool: str, args: dict[str, Any]) -> CallOutcome:
        t0 = time.perf_counter()
        with self._lock:
            try:
                outcome = self._call(tool, args)
            except Exception as exc:  # noqa: BLE001 - nothing a unit sends may raise out of call()
                log.exception("sandbox: unexpected error in call %s", str(tool)[:80])
                self._drop_child()
                outcome = self._fail(tool, "crash", f"internal sandbox error: {type(exc).__name__}: {exc}")
        outcome.elapsed_ms = round((time.perf_counter() - t0) * 1000, 3)
        return outcome

    def _fail(self, tool: str, kind: str, message: str) -> CallOutcome:
        return CallOutcome(tool=str(tool)[:200], ok=False, error=message[:MAX_ERROR_CHARS], error_kind=kind,
                           state=_clone(self._state))

    def _drop_child(self) -> None:
        if self._child is not None:
            self._pool.release(self._child)
            self._child = None

    def _call(self, tool: str, args: dict[str, Any], again: bool = False) -> CallOutcome:
        if self._closed:
            return self._fail(tool, "crash", "the episode is closed")
        problem = check_call(tool, args, self._index)
        if problem:
            return self._fail(tool, "schema", problem)
        try:
            payload = encode({"op": "call", "tool": tool, "args": args})
        except (TypeError, ValueError, RecursionError) as exc:
            return self._fail(tool, "schema", f"arguments to {tool} are not JSON-serialisable: {exc}")
        if self._child is None:
            try:
                self.restarts += 1
                self._start(restore=self._state)
            except EnvLoadError as exc:
                return self._fail(tool, "crash", f"could not rebuild the episode after the previous failure: {exc}")
        assert self._child is not None
        try:
            reply = self._child.exchange(payload, self._timeout)
        except ChildFailure as exc:
            dead, self._child = self._child, None
            if exc.kind == "crash" and not again and not dead.zygote.serving(dead.generation):
                # its jail was replaced meanwhile (a failed health check or unit verification kills the
                # jail's units): no verdict on the code, so the call runs again from the last state
                return self._call(tool, args, again=True)
            return self._fail(tool, exc.kind, exc.message + " (the next call runs in a fresh process from the last state)")
        if reply.get("ok") is True:
            try:
                new_state = self._checked(reply, state_required=False, reply_bytes=self._child.last_reply_bytes)
            except Garbage as exc:
                self._drop_child()
                return self._fail(tool, exc.kind, f"garbage on the wire ({exc}); the process was killed (the next "
                                                  "call runs in a fresh process from the last state)")
            self.last_output = reply["output"]
            diff: dict[str, Any] = {}
            if new_state is not None:
                diff = state_diff(self._state, new_state)
                self._state = new_state
            return CallOutcome(tool=tool, ok=True, result=reply.get("result"), state=_clone(self._state),
                               state_diff=diff)
        kind, error, output = reply.get("error_kind"), reply.get("error"), reply.get("output")
        if (reply.get("ok") is not False or kind not in ERROR_KINDS or not isinstance(error, str)
                or not isinstance(output, str) or set(reply) - {"ok", "error_kind", "error", "output"}):
            self._drop_child()
            return self._fail(tool, "crash", f"garbage on the wire (error reply {str(reply)[:80]!r}); the process "
                                             "was killed")
        self.last_output = output[:self._limits.output_cap + OUTPUT_SLACK]
        return self._fail(tool, kind, error)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            try:
                self._drop_child()
            except Exception:  # noqa: BLE001 - closing never raises
                log.exception("sandbox: error while closing an episode")
                self._child = None

    def __enter__(self) -> SandboxEpisode:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _serialised_size(value: Any) -> int:
    """Characters of `value` serialised as the worker does (compact, UTF-8): what the caps count."""
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")))
