"""Host handle on one isolation unit (an episode or a check): set it up, verify it, exchange frames, freeze
it between calls, kill it, explain its death.

Setup, before any untrusted code: the member's "ready" message arrives on the setup socket stamped with
its host pid; the host opens a pidfd on it (so no later signal can hit a recycled pid), verifies it from
outside (unit_check.py) and puts it in its own cgroup. Between two calls of an episode the member is
stopped (SIGSTOP through the pidfd) and resumed just before the next request, so a thread, timer or
signal handler left behind by the code cannot burn CPU or touch state while the agent thinks.
"""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import time
import weakref
from typing import TYPE_CHECKING, Any

from sandbox.call_clock import CallClock
from sandbox.frames import WireError, parse_reply, recv_frame, send_frame
from sandbox.limits import SandboxLimits
from sandbox.unit_check import unit_problem
from sandbox.zygote import ZygoteError, recv_with_creds

if TYPE_CHECKING:
    from sandbox.cgroups import Cgroups, UnitCgroup
    from sandbox.zygote import Zygote

GRACE_S = 0.2


class ChildFailure(Exception):
    """The unit is gone (killed or died); `kind` is the runtime ErrorKind to report."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message


class UnitSetupError(ZygoteError):
    """A unit did not come up as asked (no ready message, failed verification): the zygote that made it
    has been replaced."""


class HostSetupError(ZygoteError):
    """The host could not finish a unit's setup (its cgroup): the unit is killed, its zygote is not at fault
    and keeps serving the jail's other episodes."""


def explain(failure: WireError, status: dict[str, Any] | None, timeout_s: float, starved_s: float = 0.0) -> ChildFailure:
    """Turn a broken exchange plus the reaped exit status into (kind, one clear sentence)."""
    if failure.kind == "timeout":
        waited = f" (plus {starved_s:.1f} s it waited for a busy CPU)" if starved_s >= 0.05 else ""
        return ChildFailure("timeout", f"the call exceeded its {timeout_s:g} s wall-clock limit{waited}; "
                                       "the process was killed")
    if failure.kind == "oversize":
        return ChildFailure("oversize", f"{failure}; the process was killed")
    if not failure.gone:  # garbage from a live process: we killed it, its exit status says nothing more
        return ChildFailure("crash", f"{failure}; the process was killed")
    if status and status.get("oom_killed"):
        return ChildFailure("crash", f"{failure}: the unit exceeded {status['oom_killed']} and the kernel killed it")
    if status and status.get("signal_name") == "SIGXCPU":
        return ChildFailure("timeout", "the call exceeded its CPU-time limit (SIGXCPU); the process was killed")
    if status and "signal" in status:
        return ChildFailure("crash", f"{failure}: the process died from {status['signal_name']}")
    if status and "exit_code" in status:
        return ChildFailure("crash", f"{failure}: the process exited with status {status['exit_code']} without replying")
    return ChildFailure("crash", str(failure))


class Child:
    def __init__(self, zygote: Zygote, limits: SandboxLimits, cgroups: Cgroups | None,
                 freeze_between_calls: bool, kind: str = "episode") -> None:
        spawned = zygote.spawn(kind)
        self._init_handle(zygote, limits, cgroups, freeze_between_calls, spawned.pid, spawned.generation,
                          spawned.req_fd, spawned.rep_fd, extra_fds=list(spawned.spare_fds or ()))
        self.spare: SpareChild | None = None
        spare_fds = spawned.spare_fds
        try:
            self._set_up(spawned.setup_fd, parent_pid=None)
            if spare_fds is not None:
                fds, spare_fds = spare_fds, None  # the spare's handle owns them from here, even if it fails
                self.spare = SpareChild(self, fds)
        except UnitSetupError as exc:
            _release_fds(list(spare_fds or ()), [])
            self.kill()
            zygote.replace(self.generation, str(exc))
            raise
        except HostSetupError:
            _release_fds(list(spare_fds or ()), [])
            self.kill()
            raise

    def _init_handle(self, zygote: Zygote, limits: SandboxLimits, cgroups: Cgroups | None, freeze: bool,
                     pid: int | None, generation: int, req_fd: int, rep_fd: int, extra_fds: list[int]) -> None:
        self.zygote, self.limits, self._cgroups = zygote, limits, cgroups
        self.pid, self.generation = pid, generation
        self.req_fd, self.rep_fd = req_fd, rep_fd
        self.host_pid: int | None = None
        self.last_reply_bytes = 0
        self.alive = True
        self._pipes_open = True
        self._freeze = freeze
        self._frozen = False
        self._pending: tuple[CallClock, float] | None = None  # deadline of the reply `finish()` still reads
        self._pidfd: int | None = None
        self._cgroup: UnitCgroup | None = None
        # A unit dropped without kill(): closing our pipe ends makes its member exit on EOF (after a
        # SIGCONT) and the zygote reaps it, so forgotten episodes do not pile up as live processes.
        # (`extra_fds`: a pair unit's spare channels, until the spare has a handle of its own.)
        self._close_fds = weakref.finalize(self, _release_fds, [self.req_fd, self.rep_fd, *extra_fds], [None])

    # -- setup ----------------------------------------------------------------------------------
    def _set_up(self, setup_fd: int, parent_pid: int | None) -> None:
        """Receive the member's ready message, verify it from outside, put it in the unit's cgroup
        (`parent_pid`: a spare's member, whose parent is the unit's first member, which holds the cgroup)."""
        sock = socket.socket(fileno=setup_fd)
        try:
            sock.settimeout(self.limits.control_timeout_s)
            data, host_pid = recv_with_creds(sock, 4096)
        except OSError as exc:
            raise UnitSetupError(f"the unit sent no setup message: {exc.__class__.__name__}: {exc}") from None
        finally:
            sock.close()
        try:
            message = parse_reply(data, 2) if data else {}
        except WireError as exc:
            raise UnitSetupError(f"the unit's setup message: {exc}") from None
        if message.get("ok") is not True or not host_pid:
            raise UnitSetupError(f"the unit did not start: {str(message.get('error') or 'it closed its setup socket')[:400]}")
        try:
            self._pidfd = os.pidfd_open(host_pid)
        except OSError as exc:
            raise UnitSetupError(f"the unit process {host_pid} vanished: {exc}") from None
        self._close_fds.detach()
        self._close_fds = weakref.finalize(self, _release_fds, [self.req_fd, self.rep_fd], [self._pidfd])
        self.host_pid = host_pid
        identity = self.zygote.identity
        if identity is None:
            raise UnitSetupError("the zygote went away while its unit started")
        problem = unit_problem(host_pid, identity, self.limits.model_dump(), self.zygote.isolated,
                               self.zygote.seccomp, parent_pid=parent_pid)
        if problem:
            raise UnitSetupError(f"the unit failed verification: {problem}")
        if parent_pid is not None:
            return
        if self._cgroups is not None:
            try:
                self._cgroup = self._cgroups.create_unit()
                self._cgroup.attach(host_pid)
            except OSError as exc:
                if self._cgroup is not None:  # it may hold part of the unit: removed once empty, never reused
                    self._cgroups.discard(self._cgroup)
                    self._cgroup = None
                raise HostSetupError(f"cannot put the unit in its cgroup: {exc}") from None
        if _exited(self._pidfd, 0):  # it died meanwhile: the pid we wrote may be recycled
            raise UnitSetupError("the unit process died during setup")

    # -- exchange -----------------------------------------------------------------------------
    def _signal(self, sig: int) -> None:
        if self._pidfd is not None:
            try:
                signal.pidfd_send_signal(self._pidfd, sig)
            except OSError:
                pass

    def _thaw(self) -> None:
        if self._frozen:
            self._signal(signal.SIGCONT)
            self._frozen = False

    def send(self, payload: bytes, timeout_s: float) -> None:
        try:
            send_frame(self.req_fd, payload, time.monotonic() + timeout_s)
        except WireError as exc:
            raise explain(exc, self.kill(wait=True, grace=exc.gone), timeout_s) from None

    def exchange(self, payload: bytes, timeout_s: float, then: bytes | None = None) -> dict[str, Any]:
        """Send one request and wait for its reply; any failure kills the unit and raises ChildFailure.

        `then`: a second request sent right behind the first (an episode's `sync`), whose reply the caller
        reads with `finish()`, which also stops the unit; until then it keeps running."""
        deadline = CallClock(timeout_s, self.host_pid)
        size = len(payload) + 4 + (0 if then is None else len(then) + 4)
        try:
            if self._frozen and size <= select.PIPE_BUF:
                # request first, then resume: the unit wakes once, with its request already waiting (a pipe
                # holds at least PIPE_BUF bytes, so this write never waits for the stopped unit)
                send_frame(self.req_fd, payload, deadline)
                if then is not None:
                    send_frame(self.req_fd, then, deadline)
                self._thaw()
            else:
                self._thaw()
                send_frame(self.req_fd, payload, deadline)
                if then is not None:
                    send_frame(self.req_fd, then, deadline)
            reply, self.last_reply_bytes = recv_frame(self.rep_fd, deadline, self.limits.frame_cap,
                                                      self.limits.max_depth + 1,
                                                      self.reply_values())
        except WireError as exc:
            raise explain(exc, self.kill(wait=True, grace=exc.gone), timeout_s, deadline.starved_s) from None
        if then is not None:
            self._pending = (deadline, timeout_s)
        elif self._freeze:
            self._signal(signal.SIGSTOP)
            self._frozen = True
        return reply

    def finish(self) -> dict[str, Any]:
        """The reply to `exchange`'s `then` request (within the same call's deadline), then stop the unit
        between calls; failures as in exchange."""
        deadline, timeout_s = self._pending or (CallClock(self.limits.control_timeout_s, self.host_pid),
                                                self.limits.control_timeout_s)
        self._pending = None
        try:
            reply, _ = recv_frame(self.rep_fd, deadline, self.limits.frame_cap, self.limits.max_depth + 1,
                                  self.reply_values())
        except WireError as exc:
            raise explain(exc, self.kill(wait=True, grace=exc.gone), timeout_s, deadline.starved_s) from None
        if self._freeze:
            self._signal(signal.SIGSTOP)
            self._frozen = True
        return reply

    def receive(self, timeout_s: float) -> dict[str, Any]:
        """The next reply of a unit that sends several per request (a check batch); failures as exchange."""
        try:
            reply, self.last_reply_bytes = recv_frame(self.rep_fd, time.monotonic() + timeout_s,
                                                      self.limits.frame_cap, self.limits.max_depth + 1,
                                                      self.reply_values())
        except WireError as exc:
            raise explain(exc, self.kill(wait=True, grace=exc.gone), timeout_s) from None
        return reply

    def exited(self) -> bool:
        """Has the unit's process ended (a ready unit that died while it waited)?"""
        return self._pidfd is None or _exited(self._pidfd, 0)

    def set_freeze(self, freeze_between_calls: bool) -> None:
        """For a unit made before its use was known (sandbox/warm.py)."""
        self._freeze = freeze_between_calls

    def take_spare(self) -> SpareChild | None:
        """The unit's spare member, alive and never given code, for its own episode; None if there is
        none (not a pair unit, already taken, or dead). The caller owns it from now on."""
        spare, self.spare = self.spare, None
        if spare is not None and spare.exited():
            spare.kill()
            return None
        return spare

    def freeze_now(self) -> None:
        """Stop the member now if it is an episode between calls (it is stopped after every reply anyway;
        this makes sure, e.g. before its spare runs)."""
        if self.alive and self._freeze and not self._frozen:
            self._signal(signal.SIGSTOP)
            self._frozen = True

    def detach_pipes(self) -> None:
        """Close our pipe ends now (the unit can send us nothing more); `kill` does the rest later."""
        if self.spare is not None:
            self.spare.detach_pipes()
        if self.alive and self._pipes_open:
            self._pipes_open = False
            self._close_fds.detach()
            self._close_fds = weakref.finalize(self, _release_fds, [], [self._pidfd])
            _release_fds([self.req_fd, self.rep_fd], [])

    def memory_cap_hit(self) -> bool:
        """Did the kernel OOM-kill something in this unit since the last time we asked? (a check batch
        attributes a SIGKILL it did not send to the check that was running)"""
        return self._cgroup is not None and self._cgroup.take_oom_kill()

    def _forget_fds_closed_at_exit(self) -> None:
        """Detach the descriptors' finalizer; when it has already run (interpreter exit runs finalizers
        before a pool that was never closed kills its units), they are closed, and their numbers may
        belong to someone else by now: closing them again raised EBADF, or would close another file."""
        if self._close_fds.detach() is None:
            self._pipes_open = False
            self._pidfd = None

    def reply_values(self) -> int:
        """Most values one reply may hold: a state and a result at their cap, and the envelope."""
        return 2 * self.limits.state_values_cap + 64

    def kill(self, wait: bool = False, grace: bool = False) -> dict[str, Any] | None:
        """Close our pipe ends and have the zygote SIGKILL the unit. With `wait` (to explain a failure) also
        wait for it and return its exit status; a plain close does not wait (the zygote collects it).
        `grace`: the unit is already dying; give it a moment to end by itself so its own cause shows."""
        if not self.alive:
            return None
        self.alive = False
        if self.spare is not None:  # never handed out: it dies with the unit anyway; close our ends now
            self.spare.kill()
            self.spare = None
        self._forget_fds_closed_at_exit()
        if self._pipes_open:
            self._pipes_open = False
            _release_fds([self.req_fd, self.rep_fd], [])
        if grace and self._pidfd is not None:  # wait here, not in the zygote: its lock serves other episodes
            _exited(self._pidfd, GRACE_S)
        status = self.zygote.reap(self.pid, self.generation, wait)
        if self._pidfd is not None:
            os.close(self._pidfd)
            self._pidfd = None
        if self._cgroup is not None and self._cgroups is not None:
            if self._cgroup.oom_killed():
                which = (f"the pool's memory cap ({self._cgroups.caps.pool_memory >> 20} MiB, shared by all its "
                         f"units)" if self._cgroup.pool_cap_hit() else
                         f"its memory cap ({self.limits.unit_memory_bytes() >> 20} MiB)")
                status = dict(status or {}, oom_killed=which)
            self._cgroups.release(self._cgroup)
            self._cgroup = None
        return status


class SpareChild(Child):
    """Host handle on a pair unit's spare member (worker.py, `member_main`): pid 2 of the unit, forked by
    the first member before it hardened, verified from outside like it (its parent must be that member)
    and added to the unit's cgroup. It is not the zygote's child, so it is killed through its pidfd;
    it also dies with the unit (its pid namespace ends with the first member)."""

    def __init__(self, member: Child, fds: tuple[int, int, int]) -> None:  # noqa: D107 - no super().__init__
        self._init_handle(member.zygote, member.limits, None, False, None, member.generation, fds[0], fds[1],
                          extra_fds=[])
        self.spare = None
        try:
            self._set_up(fds[2], parent_pid=member.host_pid)
            if member._cgroup is not None:
                member._cgroup.add(self.host_pid)
                if self.exited():  # it died meanwhile: the pid we wrote may be recycled
                    raise UnitSetupError("the spare process died during setup")
        except OSError as exc:
            self.kill()
            raise HostSetupError(f"cannot put the spare in its unit's cgroup: {exc}") from None
        except ZygoteError:
            self.kill()
            raise

    def kill(self, wait: bool = False, grace: bool = False) -> dict[str, Any] | None:
        """SIGKILL through the pidfd and close our ends; its exit status is its parent's to collect, so
        there is none to report (a failure is explained from the wire alone)."""
        if not self.alive:
            return None
        self.alive = False
        self._forget_fds_closed_at_exit()
        if self._pipes_open:
            self._pipes_open = False
            _release_fds([self.req_fd, self.rep_fd], [])
        if self._pidfd is not None:
            if grace:
                _exited(self._pidfd, GRACE_S)
            self._signal(signal.SIGCONT)
            self._signal(signal.SIGKILL)
            if wait:
                _exited(self._pidfd, GRACE_S)
            os.close(self._pidfd)
            self._pidfd = None
        return None


def _exited(pidfd: int, timeout_s: float) -> bool:
    """Has the process behind `pidfd` ended (waiting up to `timeout_s`)? poll, not select: a busy host holds
    more than FD_SETSIZE (1024) descriptors, and select() refuses any numbered past it."""
    poller = select.poll()
    poller.register(pidfd, select.POLLIN)
    return bool(poller.poll(timeout_s * 1000))


def _release_fds(fds: list[int], pidfds: list[int | None]) -> None:
    """Finaliser of a forgotten unit: resume it (it must see EOF to exit) and close what we hold."""
    for pidfd in pidfds:
        if pidfd is not None:
            try:
                signal.pidfd_send_signal(pidfd, signal.SIGCONT)
            except OSError:
                pass
    for fd in [*fds, *(p for p in pidfds if p is not None)]:
        try:
            os.close(fd)
        except OSError:
            pass


def encode(obj: Any) -> bytes:
    """Request body; raises TypeError/ValueError for values JSON cannot carry."""
    return json.dumps(obj, allow_nan=False).encode()
