"""The zygote's control loop (jail side, standard library only; copied next to worker.py).

The zygote is trusted code only: it answers the host's control messages (`spawn`, `reap`, `ping`) on a
SOCK_SEQPACKET socket and creates one isolation unit per `spawn` (jail_unit.py). It never runs
untrusted code, holds no unit's pipes after handing them to the host, and is non-dumpable from the
first statement of worker.py, so no unit can read or write its memory or descriptors.

Per spawn the host receives, as SCM_RIGHTS descriptors: the request pipe (write end), the reply pipe
(read end) and a setup socket on which the member reports `{"ok": true}` once it is hardened (the
kernel stamps that message with the member's host pid, which the host uses to verify the unit from
outside and to put it in its cgroup) or the unit reports why it could not start.

A unit of kind "pair" is an episode whose member forks a *spare* as it hardens: a second member, pid 2
of the unit, with its own three channels, that has run nothing when the host hands it code (worker.py,
`member_main`).

The zygote keeps one unit made in advance per kind (episode; check batch or pair once one was asked for): `spawn`
hands it over and makes the next one while the host verifies the first, so an episode start does not
wait for a clone, a fork and the member's hardening.
A waiting unit runs no untrusted code and has no cgroup yet; it gets both only after it is handed over.
"""

import gc
import json
import os
import resource
import signal
import socket
import sys
import time

from jail_unit import CPU_WINDOW_EXCEEDED, INTERNAL_ERROR, clone_unit, enter_unit, probe_units
from seccomp_filter import (PID_SENTINEL, child_rules, prepared_child_rules, prepared_filter, probe_seccomp,
                            refuse_sysinfo_sysconf)


REAP_WAIT_S = 2.0  # well under the host's control_timeout_s, which would take the whole jail down
KINDS = ("episode", "batch", "pair")  # pair: an episode whose unit also holds a clean spare (worker.py)


def _dumps(obj) -> bytes:
    return json.dumps(obj, separators=(",", ":")).encode()


def describe_status(status: int, isolated: bool) -> dict:
    """A reaped unit's fate. A member that is its namespace's init ends its CPU window by exiting with
    CPU_WINDOW_EXCEEDED (it cannot die from its own SIGXCPU): reported as that signal."""
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
    elif isolated and os.WEXITSTATUS(status) == CPU_WINDOW_EXCEEDED:
        sig = signal.SIGXCPU
    else:
        return {"exit_code": os.WEXITSTATUS(status)}
    try:
        name = signal.Signals(sig).name
    except ValueError:
        name = str(sig)
    return {"signal": sig, "signal_name": name}


class ZygoteLoop:
    def __init__(self, limits: dict, member_main) -> None:
        self.ctl = socket.socket(fileno=int(limits["control_fd"]))
        self.member_main = member_main
        self.exited: dict[int, int] = {}
        # units made in advance, per kind: an episode unit always; a batch unit once batches were asked for
        self.waiting: dict[str, tuple[int, tuple]] = {}  # kind -> (pid, host ends of its channels)
        seccomp_problem = probe_seccomp() if limits.get("seccomp") else "disabled by configuration"
        units_problem = probe_units() if limits.get("isolation") == "namespaces" else None
        self.isolated = limits.get("isolation") == "namespaces" and units_problem is None
        self.limits = dict(limits, seccomp=seccomp_problem is None)
        if self.limits["seccomp"]:
            refuse_sysinfo_sysconf()  # the filter refuses sysinfo; glibc would answer with garbage instead
        if self.isolated and self.limits["seccomp"]:
            prepared_filter(1)  # built once here, inherited by every member (always pid 1 in its namespace)
            prepared_filter(1, supervisor=True)  # the check-batch supervisor's variant (jail_batch.py)
            prepared_child_rules()  # a pair unit's member and spare stack these on the supervisor variant
            child_rules(PID_SENTINEL)  # the template a batch's check children patch with their own pid
        self.hello = {"hello": True, "uid": os.getuid(), "seccomp": seccomp_problem is None,
                      "seccomp_problem": seccomp_problem, "isolation": "namespaces" if self.isolated else "shared",
                      "units_problem": units_problem, "python": sys.version.split()[0],
                      "hash_seed": os.environ.get("PYTHONHASHSEED")}

    def serve(self) -> None:
        self.ctl.send(_dumps(self.hello))
        self.prepare("episode")
        while True:
            data = self.ctl.recv(1 << 16)
            if not data:
                return
            try:
                request = json.loads(data)
                op = request["op"]
            except (ValueError, KeyError, TypeError):
                self.ctl.send(_dumps({"ok": False, "error": "bad control message"}))
                continue
            self.collect_exited()
            if op == "spawn":
                self.spawn(request.get("kind", "episode"))
            elif op == "reap":
                status = self.reap(int(request["pid"]), bool(request.get("wait", True)))
                self.ctl.send(_dumps({"ok": True, "status": status}))
            elif op == "ping":
                self.ctl.send(_dumps({"ok": True, "children": len(self.exited)}))
            else:
                self.ctl.send(_dumps({"ok": False, "error": f"unknown op {str(op)[:40]!r}"}))
            if len(self.exited) > 10000:  # statuses nobody asked for; keep memory bounded
                self.exited.clear()

    def collect_exited(self) -> None:
        """Opportunistic reaping, so finished units never pile up as zombies."""
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            self.exited[pid] = status

    def spawn(self, kind: str) -> None:
        """Hand over a unit of `kind`: "episode" (also single checks) or "batch" (a check-batch supervisor: it
        loads a different seccomp variant while hardening, so the kind is fixed when the unit is made). One
        unit per kind is kept made in advance, the batch kind only once a batch was asked for."""
        if kind not in KINDS:
            self.ctl.send(_dumps({"ok": False, "error": f"unknown unit kind {str(kind)[:40]!r}"}))
            return
        unit = self.waiting.pop(kind, None) or self.make_unit(kind)
        if isinstance(unit, str):
            self.ctl.send(_dumps({"ok": False, "error": unit}))
            return
        pid, host_ends = unit
        fds = [end if isinstance(end, int) else end.fileno() for end in host_ends]
        socket.send_fds(self.ctl, [_dumps({"ok": True, "pid": pid})], fds)
        close_ends(host_ends)
        self.prepare(kind)

    def prepare(self, kind: str) -> None:
        """Make the next unit of `kind` in advance (a failure shows on the next spawn, which retries)."""
        made = self.make_unit(kind)
        if not isinstance(made, str):
            self.waiting[kind] = made

    def make_unit(self, kind: str = "episode") -> tuple[int, tuple] | str:
        """A unit whose member is hardened and waits for its first frame, with the host's ends of its
        channels (request pipe, reply pipe, setup socket; a "pair" unit has a second such triple, for
        its spare); or why none could be made."""
        try:
            host_ends, unit_ends = _channels()
            if kind == "pair":
                spare_host, spare_unit = _channels()
                host_ends, unit_ends = host_ends + spare_host, unit_ends + spare_unit
        except OSError as exc:
            return f"cannot create a unit's channels: {exc}"[:300]
        try:
            pid = clone_unit() if self.isolated else os.fork()
        except OSError as exc:
            close_ends(host_ends + unit_ends)
            return f"cannot create a unit: {exc}"[:300]
        if pid == 0:
            self.ctl.close()
            close_ends(host_ends)
            for _, other in self.waiting.values():  # the units made before are not ours to touch
                close_ends(other)
            if self.isolated:
                enter_unit(unit_ends[2])
            spare = unit_ends[3:] or None
            self.member_main(unit_ends[0], unit_ends[1], unit_ends[2], dict(self.limits, unit_kind=kind), spare)
            os._exit(INTERNAL_ERROR)
        close_ends(unit_ends)
        return pid, host_ends

    def reap(self, pid: int, wait: bool) -> dict | None:
        """SIGKILL a unit (its member; with namespaces the kernel then empties them). With `wait`, wait for it and
        describe its end (to explain a failure); without, it is collected later (a plain close). A unit that
        died by itself has its own status (the host gives a dying unit a moment before asking)."""
        status = self.exited.pop(pid, None)
        if status is None:
            try:
                done, got = os.waitpid(pid, os.WNOHANG)
                status = got if done else None
            except ChildProcessError:
                return None
        if status is None:
            kills = (os.kill,) if self.isolated else (os.killpg, os.kill)
            for kill in kills:
                try:
                    kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            if not wait:
                return None
            status = self._wait_killed(pid)
            if status is None:
                return {"signal": signal.SIGKILL, "signal_name": "SIGKILL", "still_exiting": True}
        return describe_status(status, self.isolated)

    def _wait_killed(self, pid: int) -> int | None:
        """A killed unit's status, waited for at most REAP_WAIT_S: a thread in an uninterruptible wait
        (disk I/O) holds its exit back, and this single-threaded loop serves every unit of the jail, so a
        unit that is not gone by then is left for `collect_exited` and its neighbours are not held up."""
        deadline = time.monotonic() + REAP_WAIT_S
        pause = 0.0005
        while True:
            try:
                done, status = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                return None
            if done:
                return status
            if time.monotonic() >= deadline:
                return None
            time.sleep(pause)
            pause = min(pause * 2, 0.02)


def _channels() -> tuple[tuple, tuple]:
    """One member's channels: (host ends: request write end, reply read end, setup socket),
    (unit ends: request read end, reply write end, setup socket)."""
    req_r, req_w = os.pipe()
    rep_r, rep_w = os.pipe()
    ready_host, ready_unit = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    ready_host.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
    return (req_w, rep_r, ready_host), (req_r, rep_w, ready_unit)


def close_ends(ends) -> None:
    """Close a mix of descriptors and sockets (a unit's channel ends)."""
    for end in ends:
        if isinstance(end, int):
            os.close(end)
        else:
            end.close()


def preload(names) -> None:
    """Import trusted installed packages once, before any unit exists (sandbox/imports.py), so every unit
    forks with them loaded. Their top level runs here, in the jail but outside seccomp: never LLM code."""
    for name in names or ():
        try:
            __import__(name)
        except BaseException as exc:  # noqa: BLE001 - any failure means no usable zygote; the host shows stderr
            raise SystemExit(f"preloading {name} failed: {type(exc).__name__}: {exc}") from None


WARM_UP_FILE = "warm_up.json"  # written by the pool next to the jail modules (sandbox/imports.py)


def warm_up(limits: dict, run_episode) -> None:
    """Run the pool's warm-up episodes (`JailImports.warm_up`) a few times, before any unit exists: the
    code paths every unit runs are then already specialised by the interpreter (Python 3.11 rewrites a
    function's bytecode in place as it warms up) and the caches they build lazily (compiled regular
    expressions, `inspect`'s, a package's own) exist, so a unit neither redoes that work nor copies
    the pages it would write (measured outside the jail: a BFCL task's env, calls and checker took 13 ms
    of CPU in a fork of a cold parent, 6 ms in a fork of a warmed one). Afterwards the zygote's CPU
    limit is put back and the episodes' module is dropped; what they left in preloaded modules stays
    (every unit inherits it). Only trusted code on trusted data runs here (the zygote is outside
    seccomp): installed packages and their own data, never model output."""
    if not limits.get("warm_up"):
        return
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), WARM_UP_FILE), encoding="utf-8") as fh:
        spec = json.load(fh)
    cpu = resource.getrlimit(resource.RLIMIT_CPU)  # each call sets its CPU window: put ours back after
    had_envcode = "envcode" in sys.modules
    try:
        for _ in range(int(spec.get("rounds", 1))):
            for episode in spec["episodes"]:
                run_episode(episode, limits)
    except BaseException as exc:  # noqa: BLE001 - a failing warm-up means a broken package: no usable zygote
        raise SystemExit(f"warm-up failed: {type(exc).__name__}: {exc}") from None
    finally:
        resource.setrlimit(resource.RLIMIT_CPU, cpu)
        if not had_envcode:  # the episodes' own module, as a unit would
            sys.modules.pop("envcode", None)


def serve(limits: dict, member_main, run_episode=None) -> None:
    signal.signal(signal.SIGPIPE, signal.SIG_IGN)
    preload(limits.get("preload"))
    if run_episode is not None:
        warm_up(limits, run_episode)
    loop = ZygoteLoop(limits, member_main)
    # Everything the zygote holds now is shared copy-on-write with every unit: a collection in a unit
    # would write to (and so copy) every page of the zygote's objects it walks; frozen, it skips them.
    gc.collect()
    gc.freeze()
    loop.serve()
