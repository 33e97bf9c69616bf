"""One episode: a fresh child forked from a warm zygote holding one live instance of the env class.

Calls share that instance. What the host keeps is the last committed state (the instance's public
attributes as JSON); if the child times out or crashes it is killed and the next call runs in a
fresh child rebuilt from `cls(initial_state)` with the public attributes overwritten by that state.
"""

from __future__ import annotations

import json
import threading
import time
from typing import TYPE_CHECKING, Any

from envscaler_core.runtime import CallOutcome, EnvLoadError, config_not_loaded
from sandbox.child import Child, ChildFailure, encode
from sandbox.diff import state_diff
from sandbox.schema import check_call, index_tools

if TYPE_CHECKING:
    from sandbox.pool import SandboxPool

ERROR_KINDS = {"schema", "exception", "timeout", "crash", "unserializable", "oversize"}
MAX_ERROR_CHARS = 4000


def _clone(state: dict[str, Any]) -> dict[str, Any]:
    """Outcomes get their own copy: a consumer mutating one must not corrupt the next diff."""
    return json.loads(json.dumps(state))


class SandboxEpisode:
    def __init__(self, pool: SandboxPool, code: str, class_name: str, initial_state: dict[str, Any] | None,
                 tools: list[dict[str, Any]] | None) -> None:
        if not isinstance(code, str) or not code.strip():
            raise EnvLoadError("the env code is empty")
        if not isinstance(class_name, str) or not class_name.isidentifier():
            raise EnvLoadError(f"class name {class_name!r} is not a Python identifier")
        if initial_state is not None and not isinstance(initial_state, dict):
            raise EnvLoadError(f"the initial state must be a JSON object, got {type(initial_state).__name__}")
        try:
            encode(initial_state)
        except (TypeError, ValueError) as exc:
            raise EnvLoadError(f"the initial state is not JSON-serialisable: {exc}") from None
        self._pool, self._code, self._class_name, self._initial = pool, code, class_name, initial_state
        self._index = index_tools(tools) if tools is not None else None
        self._timeout = pool.settings.call_timeout_s
        self._lock = threading.Lock()
        self._child: Child | None = None
        self._state: dict[str, Any] = {}
        self._closed = False
        self.last_output = ""  # print() output of the last call (capped); not part of CallOutcome
        self.restarts = 0
        self._start(restore=None)

    def _start(self, restore: dict[str, Any] | None) -> None:
        """Fork a child and load the class (restoring `restore` if given); raises EnvLoadError."""
        child = self._pool.spawn_child("episode")
        msg = {"op": "load", "code": self._code, "class_name": self._class_name, "init": self._initial,
               "restore": restore}
        try:
            reply = child.exchange(encode(msg), self._timeout)
        except ChildFailure as exc:
            raise EnvLoadError(f"loading {self._class_name} failed: {exc.kind}: {exc.message}") from None
        if reply.get("ok") is not True or not isinstance(reply.get("state"), dict):
            child.kill()
            raise EnvLoadError(str(reply.get("error") or "the worker sent an invalid load reply")[:MAX_ERROR_CHARS])
        problem = None if restore is not None else config_not_loaded(self._initial, reply["state"])
        if problem:
            child.kill()
            raise EnvLoadError(f"initial state did not load: {problem}")
        self._child, self._state = child, reply["state"]
        self.last_output = str(reply.get("output", ""))

    @property
    def state(self) -> dict[str, Any]:
        with self._lock:
            return _clone(self._state)

    def call(self, tool: str, args: dict[str, Any]) -> CallOutcome:
        t0 = time.perf_counter()
        with self._lock:
            outcome = self._call(tool, args)
        outcome.elapsed_ms = round((time.perf_counter() - t0) * 1000, 3)
        return outcome

    def _fail(self, tool: str, kind: str, message: str) -> CallOutcome:
        return CallOutcome(tool=str(tool), ok=False, error=message[:MAX_ERROR_CHARS], error_kind=kind,
                           state=_clone(self._state))

    def _call(self, tool: str, args: dict[str, Any]) -> CallOutcome:
        if self._closed:
            return self._fail(tool, "crash", "the episode is closed")
        problem = check_call(tool, args, self._index)
        if problem:
            return self._fail(tool, "schema", problem)
        try:
            payload = encode({"op": "call", "tool": tool, "args": args})
        except (TypeError, ValueError) as exc:
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
            self._child = None
            return self._fail(tool, exc.kind, exc.message + " (the next call runs in a fresh process from the last state)")
        self.last_output = str(reply.get("output", ""))
        if reply.get("ok") is True:
            diff: dict[str, Any] = {}
            if "state" in reply:
                if not isinstance(reply["state"], dict):
                    self._child.kill()
                    self._child = None
                    return self._fail(tool, "crash", "garbage on the wire (state is not an object)")
                diff = state_diff(self._state, reply["state"])
                self._state = reply["state"]
            return CallOutcome(tool=tool, ok=True, result=reply.get("result"), state=_clone(self._state),
                               state_diff=diff)
        kind = reply.get("error_kind")
        if kind not in ERROR_KINDS:
            self._child.kill()
            self._child = None
            return self._fail(tool, "crash", f"garbage on the wire (error kind {str(kind)[:50]!r})")
        return self._fail(tool, kind, str(reply.get("error")))

    def close(self) -> None:
        with self._lock:
            self._closed = True
            if self._child is not None:
                self._child.kill()
                self._child = None

    def __enter__(self) -> SandboxEpisode:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
