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

from envscaler_core.runtime import STATE_NOT_LOADED, CallOutcome, EnvLoadError, EpisodeBreach, config_not_loaded
from sandbox.child import Child, ChildFailure, encode
from sandbox.diff import state_diff
from sandbox.limits import MAX_REQUEST_BYTES
from sandbox.schema import check_call, index_tools
from sandbox.zygote import ZygoteError

if TYPE_CHECKING:
    from sandbox.pool import SandboxPool

log = logging.getLogger("sandbox")
ERROR_KINDS = {"schema", "exception", "unserializable", "oversize"}  # what the worker sends; timeout and crash
# are the host's own verdicts, so a reply claiming one is garbage
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
                 load_calls: Callable[[dict[str, Any] | None], int] | None = None, rules: str = "factory") -> None:
        """`spare`: the unit also holds a clean spare process (`open_spare`). `child`: a unit member to
        load in instead of a new unit (a spare); a restart after a crash always gets a new unit.
        `load_calls(restore)`: a load may take as long as this many calls (`restore` is None for the first
        load, else the state being rebuilt), for classes whose load replays work: a BFCL episode re-runs
        its calls after a crash, its checker runs every call of a task. Default: one call's limit.
        `rules="envscaler"` (an env imported from EnvScaler, `AcceptedEnv.episode_rules`): the unit plays
        EnvScaler's `step`: a result JSON cannot carry is observed as its text, and a tool that raises leaves
        the state as it left it (docs/sandbox.md, "Wire")."""
        if rules not in ("factory", "envscaler"):
            raise EnvLoadError(f"episode rules {rules!r} are neither 'factory' nor 'envscaler'")
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
        self._rules = rules
        self._limits = pool.limits
        self._lock = threading.Lock()
        self._child: Child | None = None
        self._kind = "pair" if spare else "episode"
        self._given = child
        self._state: dict[str, Any] = {}
        self._closed = False
        self._seq = 0  # requests sent to this episode's units; every reply must name the one it answers
        self._unsynced = False  # a reply was taken since the unit last proved it had sent nothing more
        self.breach: str | None = None  # why the episode ended: its unit sent a frame the host did not ask for
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
        seq = self._next_seq()
        msg = encode({"op": "load", "seq": seq, "code": self._code, "class_name": self._class_name,
                      "init": self._initial, "restore": restore, "cpu_s": self._timeout,  # cpu_s: later calls' window
                      **({"rules": "envscaler"} if self._rules == "envscaler" else {})})
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
        problem = _wrong_seq(reply, seq)
        if problem:
            child.kill()
            raise EnvLoadError(f"loading {self._class_name} failed: crash: garbage on the wire ({problem})")
        if reply.get("ok") is not True:
            child.kill()
            raise EnvLoadError(str(reply.get("error") or "the worker sent an invalid load reply")[:MAX_ERROR_CHARS])
        held = {name: reply.pop(name, []) for name in ("loaded", "consumed", "rewritten")}
        try:
            for name, keys in held.items():
                if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
                    raise Garbage(f"{name!r} is not a list of keys")
            state = self._checked(reply, state_required=True, reply_bytes=child.last_reply_bytes)
        except Garbage as exc:
            child.kill()
            raise EnvLoadError(f"loading {self._class_name} failed: crash: garbage on the wire ({exc})") from None
        problem = None if restore is not None else config_not_loaded(
            self._initial, state, set_as_given=set(held["loaded"]), consumed=set(held["consumed"]),
            rewritten=held["rewritten"])
        if problem:
            child.kill()
            raise EnvLoadError(f"{STATE_NOT_LOADED}: {problem}")
        self._child, self._state = child, state
        self._unsynced = True
        self.last_output = reply["output"]

    def _checked(self, reply: dict[str, Any], state_required: bool, reply_bytes: int) -> dict[str, Any] | None:
        """The reply's new state (None: unchanged) after checking its shape and caps; raises Garbage."""
        allowed = {"seq", "ok", "result", "output", "state"}
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
        """The last committed state. Reading it first makes sure the unit sent nothing after its last reply
        (a frame a tool wrote itself would have shifted it); if it did, the episode ends (`breach`) and this
        raises EpisodeBreach, as does every later read: the replies taken before the extra frame was found,
        and so this state, may be forged."""
        with self._lock:
            self._sync()
            if self.breach is not None:
                raise EpisodeBreach(self.breach)
            return _clone(self._state)

    def _next_seq(self) -> int:
        self._seq += 1
        return self._seq

    def _sync(self) -> None:
        """One `sync` request, answered by the worker's loop at once: a frame arriving before its reply is
        one more frame for an earlier request. Costs one round trip, only after a reply was taken."""
        if not self._unsynced or self._child is None or self._closed:
            return
        self._unsynced = False
        try:
            reply = self._child.exchange(self._sync_request(), self._timeout)
        except ChildFailure as exc:  # died or hung after its last reply: the next call rebuilds it, as after a crash
            self._child = None
            log.warning("sandbox: %s's unit failed between calls: %s: %s", self._class_name, exc.kind, exc.message)
            return
        self._wrong_ack(reply, self._seq)

    def _end(self, problem: str) -> None:
        """A frame the host did not ask for: the reply taken before it may have been forged, so no later
        reply of this episode is believed; the unit is killed and every later call is a crash."""
        self.breach = (f"the episode's process sent a frame the host did not ask for ({problem}): a tool wrote "
                       "to the reply pipe itself, so earlier replies of this episode may be forged; the episode "
                       "was ended")
        self._drop_child()

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
        if self.breach is not None:
            return self._fail(tool, "crash", self.breach)
        problem = check_call(tool, args, self._index)
        if problem:
            return self._fail(tool, "schema", problem)
        try:
            body = encode({"op": "call", "tool": tool, "args": args})
        except (TypeError, ValueError, RecursionError) as exc:
            return self._fail(tool, "schema", f"arguments to {tool} are not JSON-serialisable: {exc}")
        if len(body) > MAX_REQUEST_BYTES:
            return self._fail(tool, "schema", f"arguments to {tool} are {len(body):,} bytes as JSON, over the "
                                              f"{MAX_REQUEST_BYTES:,} a call may send (sandbox.limits.MAX_REQUEST_BYTES)")
        if self._child is None:
            try:
                self.restarts += 1
                self._start(restore=self._state)
            except EnvLoadError as exc:
                return self._fail(tool, "crash", f"could not rebuild the episode after the previous failure: {exc}")
        assert self._child is not None
        seq = self._next_seq()
        payload = b'{"seq":%d,' % seq + body[1:]
        try:
            # a sync right behind the call (no extra wake-up): its answer must be the next frame after the
            # reply, so a frame the tool wrote itself is found at this very call
            reply = self._child.exchange(payload, self._timeout, then=self._sync_request())
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
            problem = self._wrong_reply(reply, seq) or self._finish(tool)
            if problem:
                return self._fail(tool, "crash", problem)
            self.last_output = reply["output"]
            diff: dict[str, Any] = {}
            if new_state is not None:
                diff = state_diff(self._state, new_state)
                self._state = new_state
            return CallOutcome(tool=tool, ok=True, result=reply.get("result"), state=_clone(self._state),
                               state_diff=diff)
        kind, error, output = reply.get("error_kind"), reply.get("error"), reply.get("output")
        kept = self._rules == "envscaler" and kind == "exception"  # the state a raising tool left comes along
        if (reply.get("ok") is not False or kind not in ERROR_KINDS or not isinstance(error, str)
                or not isinstance(output, str)
                or set(reply) - {"seq", "ok", "error_kind", "error", "output", *(["state"] if kept else [])}):
            self._drop_child()
            return self._fail(tool, "crash", f"garbage on the wire (error reply {str(reply)[:80]!r}); the process "
                                             "was killed")
        left = None
        if "state" in reply:
            try:
                left = self._checked({"output": output, "state": reply["state"]}, state_required=True,
                                     reply_bytes=self._child.last_reply_bytes)
            except Garbage as exc:
                self._drop_child()
                return self._fail(tool, exc.kind, f"garbage on the wire ({exc}); the process was killed (the next "
                                                  "call runs in a fresh process from the last state)")
        problem = self._wrong_reply(reply, seq) or self._finish(tool)
        if problem:
            return self._fail(tool, "crash", problem)
        self.last_output = output[:self._limits.output_cap + OUTPUT_SLACK]
        diff: dict[str, Any] = {}
        if left is not None:  # the change is committed, so the diff says what it was (red team 8, F6)
            diff, self._state = state_diff(self._state, left), left
        failed = self._fail(tool, kind, error)
        failed.state_diff = diff
        return failed

    def _sync_request(self) -> bytes:
        return encode({"op": "sync", "seq": self._next_seq()})

    def _finish(self, tool: str) -> str | None:
        """Read the answer to the sync sent behind a call; None if it is exactly that, else why the episode
        ended. Anything between the call's reply and it was a second frame for the call."""
        assert self._child is not None
        try:
            ack = self._child.finish()
        except ChildFailure as exc:
            self._child = None
            return (f"{exc.message} (after replying to {str(tool)[:80]}; the next call runs in a fresh process from "
                    "the last state)")
        self._unsynced = True  # a thread may still write after the answer; the next state read syncs again
        return self._wrong_ack(ack, self._seq)

    def _wrong_ack(self, ack: dict[str, Any], seq: int) -> str | None:
        problem = _wrong_seq(ack, seq) or (None if ack == {"ok": True, "output": ""} else
                                           f"the reply to a sync request was {str(ack)[:80]!r}")
        if problem is None:
            return None
        self._end(problem)  # the worker answers a sync at once: any other frame first is one too many
        return self.breach

    def _wrong_reply(self, reply: dict[str, Any], seq: int) -> str | None:
        """None when `reply` answers request `seq`. A frame for an earlier request means that request got
        two: the episode ends (`_end`). Any other number (or none) is a frame the worker never writes, and
        the first one for this request: garbage, the unit is killed and the episode goes on as after a crash."""
        problem = _wrong_seq(reply, seq)
        if problem is None:
            return None
        if problem.startswith("a frame for request"):
            self._end(problem)
            return self.breach
        self._drop_child()
        return (f"garbage on the wire ({problem}); the process was killed (the next call runs in a fresh process "
                "from the last state)")

    def close(self) -> None:
        with self._lock:
            try:
                known = self.breach
                self._sync()  # a frame sent after the last reply is still found: kept in `breach`, and logged
                if self.breach is not None and known is None:  # no call or state read will report it
                    log.warning("sandbox: %s: %s", self._class_name, self.breach)
            except Exception:  # noqa: BLE001 - closing never raises
                log.exception("sandbox: error while closing an episode")
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


def _wrong_seq(reply: dict[str, Any], seq: int) -> str | None:
    """Why `reply` is not the answer to request `seq` (the worker echoes every request's number), or None."""
    got = reply.pop("seq", None)
    if got == seq and type(got) is int:
        return None
    if type(got) is int and got < seq:
        return f"a frame for request {got} arrived while request {seq} waited for its reply"
    return f"a reply naming request {str(got)[:40]} while request {seq} waited for its reply"


def _serialised_size(value: Any) -> int:
    """Characters of `value` serialised as the worker does (compact, UTF-8): what the caps count."""
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")))
