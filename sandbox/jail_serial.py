"""A unit of short episodes of one class (jail side, standard library only; copied next to worker.py).

The programmatic validation pass runs ~30 probes per candidate, each a fresh episode of one or two
calls: as one unit per probe, most of a probe's cost was the unit itself (clone into new namespaces,
hardening, the host's verification, cgroup attach, teardown). A unit of kind "serial" pays that once
for several probes of one candidate (the host never gives a serial unit to two candidates, nor runs
two of its episodes at once: sandbox/episode_batch.py).

The unit's pid 1 is the *supervisor*: trusted code only, hardened with the supervisor variant of the
filter (it may fork), exactly as a check batch's (jail_batch.py). Its first and only request is
`{"op": "fork"}`, which carries no code at all (it only says the host has put the unit in its cgroup,
which the members then share). It then forks **one episode member per pipe pair the zygote made with the
unit** (`serial_members`), before any code reaches the unit; each member:
* closes every descriptor but its own request/reply pipes and the unit's setup socket;
* resets SIGXCPU and the parent-death signal (it is not its namespace's init), unblocks every signal;
* stacks the seccomp process rules for its own pid (together with the supervisor's filter: exactly
  the unit filter, so it may not fork, signal or ptrace anything but itself, nor make pipes);
* sends the host its ready message on the setup socket, naming its index (the host holds that pipe
  pair's other ends since the spawn) and stamped by the kernel with its host pid (the host verifies it
  from outside like any unit), closes the socket and waits for its first frame;
* then serves exactly one episode (a `load`, then `call`s) like any unit's member, and exits.
The supervisor closes the setup socket and every member's pipe ends once it has forked them all, then only reaps
its children and reports each exit status to the host, one frame each: `{"pid": n, "status": {...}}`
(the host needs it to name a crash or a CPU-window timeout, as the zygote does for a unit).

Why a probe cannot see another's results: every member is a copy of the supervisor from before any
code arrived, the supervisor never receives a request, reply or state of an episode (only exit
statuses, after every member was forked), members hold no descriptor of each other, are non-dumpable
and hidden by the private `/proc`, and the file system is read-only. What the members of a unit do
share: its cgroup (memory, pids, one core) and RLIMIT_NPROC, as a check batch's checks do; the host runs
one episode of a unit at a time, so a hog cannot slow a sibling that is running.
"""

import base64
import gc
import json
import marshal
import os
import signal
import socket
import types

from jail_unit import INTERNAL_ERROR, become_spare
from jail_zygote import describe_status
from seccomp_filter import ChildRules



def code_of(msg: dict) -> types.CodeType:
    """The env's code object: the `compiled` one a compile-only member made for this batch (sandbox/
    episode_batch.py) when the load frame carries it and it unmarshals to code, else compiled here from the
    source. Same interpreter, same flags: the same code object either way. Raises what `compile` raises."""
    compiled = msg.get("compiled")
    if isinstance(compiled, str):
        try:
            code = marshal.loads(base64.b64decode(compiled, validate=True))
        except Exception:  # noqa: BLE001 - a bad blob means: compile the source ourselves
            code = None
        if isinstance(code, types.CodeType):
            return code
    return compile(msg["code"], "<env>", "exec", dont_inherit=True)


def compile_reply(msg: dict, dumps, error_reply) -> str:
    """A compile-only member's one reply: the env's code compiled and marshalled, nothing run. Why: every
    probe of a candidate compiled the same source (~1.3 ms of a ~4 ms probe for a 7.5 KB class); this member
    is forked before any code arrived and never executes any, so what it returns depends on the source
    alone and carries nothing of any probe (an episode loads it as untrusted input to its own process)."""
    try:
        code = compile(msg["code"], "<env>", "exec", dont_inherit=True)
        return dumps({"ok": True, "compiled": base64.b64encode(marshal.dumps(code)).decode("ascii")})
    except BaseException as exc:  # noqa: BLE001 - the source's own problem: each episode reports it as before
        return error_reply("load", f"{type(exc).__name__}")


def close_all_but(keep: set) -> None:
    """Close every descriptor not in `keep` (closerange: no /proc walk, as jail_batch's children do)."""
    low = 0
    for fd in sorted(keep):
        if fd > low:  # never an empty range: CPython 3.11 turns closerange(n, n) into "close all from n"
            os.closerange(low, fd)
        low = fd + 1
    os.closerange(low, 1 << 16)


def fork_member(index: int, pipes: tuple[int, int], ready: socket.socket, rules, serve_episode) -> None:
    """Member `index`, forked on its own request/reply pipe ends (made by the zygote with the unit, whose
    host ends the host received with it) and hardened; raises OSError when it cannot be made. `rules`: the
    seccomp process rules to stack, None when the pool runs without seccomp."""
    pid = os.fork()
    if pid == 0:
        code = INTERNAL_ERROR
        try:
            close_all_but({0, 1, 2, *pipes, ready.fileno()})
            become_spare()
            signal.pthread_sigmask(signal.SIG_SETMASK, ())
            if rules is not None and rules.load(os.getpid()) is not None:
                os._exit(INTERNAL_ERROR)
            # no descriptors in this message: descriptors in flight count against a budget of the host uid
            # (every unit's), capped by the sender's RLIMIT_NOFILE (measured: 14 candidates at once hit it)
            ready.send(json.dumps({"ok": True, "pid": os.getpid(), "i": index}).encode())
            ready.close()
            serve_episode(*pipes)
            code = 0
        except BaseException:  # noqa: BLE001 - never fall back into the supervisor's loop
            code = INTERNAL_ERROR
        finally:
            os._exit(code)


def run_serial(request: dict, rep_fd: int, ready: socket.socket, limits: dict, serve_episode, dumps,
               write_frame, members: tuple) -> None:
    """Fork every member (`members`: the unit ends of each one's request and reply pipe), close what was
    theirs, then reap them and report each one's exit status; returns when all are gone."""
    rules = ChildRules() if limits.get("seccomp") else None
    gc.freeze()  # the members' collector never walks (and so never copies) the supervisor's objects
    made = 0
    for index, pipes in enumerate(members):
        try:
            fork_member(index, pipes, ready, rules, serve_episode)
            made += 1
        except OSError:
            pass  # the host waits for the ready messages and treats a missing one as a spent unit
        for fd in pipes:
            os.close(fd)
    ready.close()
    while made:
        try:
            pid, status = os.waitpid(-1, 0)
        except ChildProcessError:
            return
        made -= 1
        write_frame(rep_fd, dumps({"pid": pid, "status": describe_status(status, False)}))
