"""Many short episodes of ONE class from ONE config (the programmatic validation pass's probes), in
serial units: `pool.episode_batch(code, class_name, config, tools)`.

Why: a probe is a fresh episode of one or two calls, and as one unit per probe most of its CPU was the
unit itself (clone into new namespaces, hardening, the host's verification, three cgroup migrations,
teardown; ~5 of ~8 ms per probe). A serial unit (sandbox/jail_serial.py) is made, verified and put in
its cgroup once; its trusted supervisor forks `SERIAL_MEMBERS` members before any code reaches it, and
each member serves exactly one episode, loaded by the host's `SandboxEpisode` exactly as in a unit of
its own (same load frame, same calls, same wire checks, caps, timeouts and error kinds).

The rules that keep one probe's outcome independent of the others:
* a batch belongs to one (code, class, config, tools): its units are never handed to another batch,
  and an `open_episode` for anything else opens an ordinary episode;
* a unit runs one episode at a time (it is taken from the batch's free list by `open_episode` and put
  back when that episode closes), so no probe shares the unit's memory, pids or CPU with a running
  sibling; concurrent callers get one unit each;
* a closed episode's member is killed and waited for before its unit serves the next one, so its memory
  and threads are gone (the unit's cgroup is shared);
* a unit whose supervisor died (say the cgroup's OOM killer took it) is dropped: the episode running
  in it failed, as it would in its own unit, and the next episode gets a fresh unit; a member that
  cannot be taken for any reason means a new unit, then an ordinary episode.
A restart after a crash or timeout (`SandboxEpisode._start(restore=...)`) opens an ordinary unit.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import threading
import time
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from envscaler_core.runtime import CheckOutcome
from sandbox.child import GRACE_S, Child, ChildFailure, UnitSetupError, _exited, _release_fds, encode
from sandbox.episode import SandboxEpisode
from sandbox.frames import WireError, recv_frame
from sandbox.unit_check import member_problem, read_status
from sandbox.zygote import SERIAL_MEMBERS, ZygoteError, recv_with_creds

if TYPE_CHECKING:
    from sandbox.pool import SandboxPool

log = logging.getLogger("sandbox")
STATUS_KEYS = {"exit_code": int, "signal": int, "signal_name": str}
COMPILED_CAP = 1 << 20  # a bigger compiled blob is not worth a frame: episodes compile the source themselves
EXIT_WAIT_S = 2.0  # a killed member's exit, before its unit serves the next episode
UNIT_WAIT_S = 1.0  # longest wait for a busy unit before a caller gets a unit of its own


class MemberChild(Child):
    """Host handle on one member of a serial unit: its own request/reply pipes (made by the zygote with the
    unit; the member's ready message names its index), a pidfd, verified from outside like a unit (its
    parent must be the supervisor). Its exit status comes from the supervisor (not the zygote's child)."""

    def __init__(self, unit: SerialUnit, nspid: int, host_pid: int, req_fd: int, rep_fd: int) -> None:  # noqa: D107
        sup = unit.supervisor
        self._init_handle(sup.zygote, sup.limits, None, False, None, sup.generation, req_fd, rep_fd, extra_fds=[])
        self.spare = None
        self.unit, self.nspid = unit, nspid
        try:
            self._pidfd = os.pidfd_open(host_pid)
        except OSError as exc:
            self.kill()
            raise UnitSetupError(f"the member process {host_pid} vanished: {exc}") from None
        self._close_fds.detach()
        self._close_fds = _finalizer(self, req_fd, rep_fd, self._pidfd)
        self.host_pid = host_pid
        problem = unit.member_problem(host_pid)
        if problem is None and (self.exited() or sup.exited()):
            problem = "it or its supervisor has ended (the unit died)"
        if problem:
            self.kill()
            raise UnitSetupError(f"a serial unit's member failed verification: {problem}")

    def lost(self) -> bool:
        """A load that crashed because the unit's supervisor died (killed from outside, or by the kernel's OOM
        killer, perhaps for this very load) is loaded again in a fresh unit, which gives the verdict."""
        # a pid namespace's init ends after every process in it: give it a moment (only after a crash)
        return super().lost() or self.unit.supervisor.exited(GRACE_S)

    def detach_pipes(self) -> None:
        """Closing an episode kills its member at once and waits for it: the next episode of the unit
        must not share the unit's memory with it (the pool's keeper would kill it later)."""
        self.kill()

    def kill(self, wait: bool = False, grace: bool = False) -> dict[str, Any] | None:
        """SIGKILL through the pidfd, wait for the end; with `wait`, the exit status the supervisor reports
        (plus the memory cap, if the kernel's OOM killer struck meanwhile), to explain a failure."""
        if not self.alive:
            return None
        self.alive = False
        self._close_fds.detach()
        if self._pipes_open:
            self._pipes_open = False
            for fd in (self.req_fd, self.rep_fd):
                _close(fd)
        status = None
        if self._pidfd is not None:
            if grace:
                _exited(self._pidfd, GRACE_S)
            self._signal(signal.SIGCONT)
            self._signal(signal.SIGKILL)
            _exited(self._pidfd, EXIT_WAIT_S)
            os.close(self._pidfd)
            self._pidfd = None
            if wait:
                status = self.unit.status_of(self.nspid)
        if wait and self.unit.supervisor.memory_cap_hit():
            status = dict(status or {}, oom_killed=f"{self.limits.unit_memory_bytes() >> 20} MiB")
        return status


class SerialUnit:
    """A serial unit: its supervisor's handle (a `Child` of kind "serial") and the members not yet taken."""

    def __init__(self, supervisor: Child) -> None:
        self.supervisor = supervisor
        self.left = SERIAL_MEMBERS
        self.statuses: dict[int, dict[str, Any]] = {}
        self._supervisor_status: dict[str, str] | None = None
        self._lock = threading.Lock()

    def member_problem(self, host_pid: int) -> str | None:
        """Why member `host_pid` may not be used (sandbox/unit_check.py, `member_problem`), or None. The
        supervisor's own status is read once, when its first member is checked."""
        if self._supervisor_status is None:
            try:
                self._supervisor_status = read_status(self.supervisor.host_pid or 0)
            except (OSError, ValueError) as exc:
                return f"cannot inspect the supervisor: {exc}"
        return member_problem(host_pid, self.supervisor.host_pid or 0, self._supervisor_status,
                              self.supervisor.zygote.seccomp)

    def usable(self) -> bool:
        return self.left > 0 and self.supervisor.alive and not self.supervisor.exited()

    def take(self) -> MemberChild | None:
        """The next member, verified; None when there is none left or the unit is dead (then close it)."""
        if not self.usable() or self.supervisor.setup_sock is None:
            return None
        self.left -= 1
        sock = self.supervisor.setup_sock
        try:
            sock.settimeout(self.supervisor.limits.control_timeout_s)
            data, host_pid = recv_with_creds(sock, 256)
        except OSError as exc:
            log.warning("sandbox: a serial unit's member did not report: %s", exc)
            self.left = 0
            return None
        try:
            message = json.loads(data) if data else None
        except ValueError:
            message = None
        ok = isinstance(message, dict) and message.get("ok") is True
        nspid, index = (message.get("pid"), message.get("i")) if ok else (None, None)
        pipes = self.supervisor.member_fds.pop(index, None) if type(index) is int else None
        if pipes is None or not host_pid or type(nspid) is not int:
            if pipes is not None:
                _release_fds(list(pipes), [])
            self.left = 0  # no message (EOF: the members are gone) or one the trusted member never sends
            return None
        try:
            return MemberChild(self, nspid, host_pid, pipes[0], pipes[1])
        except UnitSetupError as exc:
            log.warning("sandbox: %s", exc)
            self.left = 0
            return None

    def status_of(self, nspid: int) -> dict[str, Any] | None:
        """The exit status the supervisor reports for member `nspid` (None if the supervisor is gone or sent
        garbage: the failure is then explained from the wire alone)."""
        with self._lock:
            deadline = time.monotonic() + EXIT_WAIT_S
            while nspid not in self.statuses and self.supervisor.alive:
                try:
                    frame, _ = recv_frame(self.supervisor.rep_fd, deadline, 4096, 3)
                except WireError:  # the supervisor is gone (EOF: it closes its pipes as it exits) or stuck
                    self.left = 0
                    return None
                pid, status = frame.get("pid"), frame.get("status")
                if type(pid) is not int or not isinstance(status, dict) or not status or any(
                        key not in STATUS_KEYS or type(value) is not STATUS_KEYS[key] for key, value in status.items()):
                    self.left = 0  # the supervisor is trusted code: garbage means the unit is not sound
                    return None
                self.statuses[pid] = status
            return self.statuses.pop(nspid, None)

    def close(self, pool: SandboxPool) -> None:
        pool.release(self.supervisor)  # the supervisor's end kills every member left (pid namespace)


class EpisodeBatch:
    """An `EnvRuntime` for one class and config: `open_episode` with exactly these arguments takes a member of
    one of the batch's serial units; anything else is an ordinary episode. Close it when done (a context
    manager): its units are released then."""

    def __init__(self, pool: SandboxPool, code: str, class_name: str, config: dict[str, Any] | None,
                 tools: list[dict[str, Any]] | None) -> None:
        self._pool = pool
        self._key = (code, class_name, config, tools)
        self._free: list[SerialUnit] = []
        self._lock = threading.Lock()
        self._cond = threading.Condition(self._lock)
        self._busy = 0  # units handed out with an episode open in them
        self._max_units = max(1, len(pool.zygotes))
        self._closed = False
        self._compile_lock = threading.Lock()
        self._compiled: str | None = None
        self._compile_tried = False
        self.units_made = 0  # for specs and benchmarks

    def open_episode(self, code: str, class_name: str, initial_state: dict[str, Any] | None,
                     tools: list[dict[str, Any]] | None = None) -> Any:
        if (code, class_name, initial_state, tools) != self._key:
            return self._pool.open_episode(code, class_name, initial_state, tools)
        taken = self._take()
        if taken is None:
            return self._pool.open_episode(code, class_name, initial_state, tools)
        unit, member = taken
        try:
            compiled = self._compile(unit, member)
            episode = SandboxEpisode(self._pool, code, class_name, initial_state, tools, child=member,
                                     compiled=compiled)
        except BaseException:
            member.kill()
            self._give_back(unit)
            raise
        return _UnitEpisode(episode, member, lambda: self._give_back(unit))

    def run_checks(self, checks: list[str], initial_state: dict[str, Any], final_state: dict[str, Any],
                   timeout_s: float | None = None) -> list[CheckOutcome]:
        return self._pool.run_checks(checks, initial_state, final_state, timeout_s)

    def _compile(self, unit: SerialUnit, member: MemberChild) -> str | None:
        """The batch's code compiled once, by a compile-only member of `unit` (jail_serial.py, `compile_reply`):
        forked before any code arrived, it compiles and exits without running anything, so its blob holds
        nothing of any episode. None when that failed (each episode then compiles the source itself and
        meets the same error as before). Concurrent first episodes wait for it rather than compile too."""
        with self._compile_lock:
            if not self._compile_tried:
                self._compile_tried = True
                compiler = unit.take() if unit.left > 1 else None
                if compiler is not None:
                    try:
                        reply = compiler.exchange(encode({"op": "compile", "code": self._key[0]}),
                                                  self._pool.settings.call_timeout_s)
                        blob = reply.get("compiled")
                        if reply.get("ok") is True and isinstance(blob, str) and len(blob) <= COMPILED_CAP:
                            self._compiled = blob
                    except ChildFailure:
                        pass
                    finally:
                        compiler.kill()
            return self._compiled

    def _take(self) -> tuple[SerialUnit, MemberChild] | None:
        """A free unit's next member (a new unit when none is free or the free one is spent); None: open an
        ordinary episode instead."""
        with self._lock:
            # One unit per core (zygote) at most while the others are busy: a unit runs one episode at a
            # time, so more units only add clones, teardowns and members forked for nothing (measured: 4
            # probe threads with a unit each cost ~10% more CPU per probe than with two). A caller waits for
            # one to come back, but never long: one holding an episode while it opens another must not hang.
            self._cond.wait_for(lambda: self._closed or self._free or self._busy < self._max_units, UNIT_WAIT_S)
            if self._closed:
                return None
            unit = self._free.pop() if self._free else None
            self._busy += 1
        taken = self._member(unit)
        if taken is None:
            self._release_slot()
        return taken

    def _member(self, unit: SerialUnit | None) -> tuple[SerialUnit, MemberChild] | None:
        for _ in range(2):
            if unit is None:
                try:
                    unit = SerialUnit(self._pool.spawn_child(kind="serial"))
                except ZygoteError as exc:
                    log.warning("sandbox: no serial unit (%s); opening an ordinary episode", exc)
                    return None
                self.units_made += 1
            member = unit.take()
            if member is not None:
                return unit, member
            unit.close(self._pool)
            unit = None
        return None

    def _release_slot(self) -> None:
        with self._cond:
            self._busy -= 1
            self._cond.notify()

    def _give_back(self, unit: SerialUnit) -> None:
        with self._cond:
            self._busy -= 1
            self._cond.notify()
            if not self._closed and unit.usable():
                self._free.append(unit)
                return
        unit.close(self._pool)

    def close(self) -> None:
        with self._cond:
            self._closed = True
            units, self._free = self._free, []
            self._cond.notify_all()
        for unit in units:
            unit.close(self._pool)

    def __enter__(self) -> EpisodeBatch:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _UnitEpisode:
    """A `SandboxEpisode` in a serial unit's member; closing it hands the unit back to its batch."""

    def __init__(self, episode: SandboxEpisode, member: MemberChild, give_back: Callable[[], None]) -> None:
        self.episode, self._member, self._give_back = episode, member, give_back
        self._lock = threading.Lock()
        self._open = True

    @property
    def state(self) -> dict[str, Any]:
        return self.episode.state

    @property
    def host_pid(self) -> int | None:
        return self.episode.host_pid

    @property
    def last_output(self) -> str:
        return self.episode.last_output

    def call(self, tool: str, args: dict[str, Any]) -> Any:
        return self.episode.call(tool, args)

    def close(self) -> None:
        self._member.kill()  # here, not on the pool's keeper thread: the unit serves its next episode now
        self.episode.close()
        with self._lock:
            was_open, self._open = self._open, False
        if was_open:
            self._give_back()

    def __enter__(self) -> _UnitEpisode:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _close(fd: int) -> None:
    try:
        os.close(fd)
    except OSError:
        pass


def _finalizer(owner: object, req_fd: int, rep_fd: int, pidfd: int) -> weakref.finalize:
    """A forgotten member: resume it so it sees EOF, close what we hold (as for any unit)."""
    return weakref.finalize(owner, _release_fds, [req_fd, rep_fd], [pidfd])

