"""A batch of check functions in one isolation unit (jail side, standard library only; copied next to
worker.py).

The unit's pid 1 is the *supervisor*: trusted code only. It receives one request holding the states and
every check of the batch, parses the states once, then forks **one child per check before any check
runs**. Each child closes every descriptor but its own reply pipe, stacks the seccomp process rules
for its own pid on the supervisor's filter (together: the unit filter; from then on it may not fork,
signal anything but itself, ptrace, ...) and stops itself. The supervisor then resumes the children
one at a time: a child runs exactly one check on its own copy-on-write copy of the states, writes one
framed reply on its own pipe and exits (or is killed at its deadline); the supervisor reaps it, then
reads that one reply, before it resumes the next child.

Why each piece:
* forked before any check ran: a child's memory is a copy of the supervisor from before the first
  check, so it holds no result, reply or remnant of another check (only the batch's sources and
  states, which every check of the batch receives anyway);
* one at a time: a check cannot slow a sibling into a timeout, and no two checks run at once;
* own reply pipe, read once after the child is gone: forged frames reach only the check's own pipe,
  and the supervisor reads exactly one reply (capped, parsed under the wire rules with a tiny depth
  cap), so a check patching builtins, the serialiser, `json` or the pipe can change only its own outcome;
* waiting for the child's end (SIGCHLD, blocked and taken with sigtimedwait) rather than for its reply
  and then its death: one wake-up of the supervisor per check, which is what a loaded machine charges for;
* non-dumpable (inherited from the zygote) and hidden by the private `/proc` (`hidepid=invisible`): a
  child cannot read or write the supervisor's or a sibling's memory or descriptors; seccomp refuses
  `kill`/`tgkill` except to itself, `ptrace`, `process_vm_*`, `fork`;
* not its namespace's init: a child dies from its own SIGXCPU (its CPU window) and `os.abort()`
  raises SIGABRT, as in any process;
* memory: a check is held by RLIMIT_AS like any unit process, and the unit's cgroup caps the batch; if
  the cgroup's OOM killer strikes, it takes the process with the most memory, i.e. the check that
  allocated it (the supervisor cannot raise a child's OOM score: /proc files of a non-dumpable process
  belong to root). Should it take the supervisor anyway, the host blames the running check and runs
  the later checks again in a fresh unit (sandbox/checks.py).

Supervisor -> host: one frame per check, in order: `{"i": n, "passed": bool|null, "error": str|null}`.
"""

import gc
import json
import os
import select
import signal
import struct
import time

import jail_json
from jail_unit import INTERNAL_ERROR
from seccomp_filter import ChildRules

HEADER = struct.Struct(">I")
REPLY_CAP = 64 << 10  # what the supervisor reads of a reply at most (an honest one fits PIPE_SAFE)
PIPE_SAFE = 4000  # an honest reply, header included, fits one page of a pipe
REPLY_DEPTH = 2
ERROR_CHARS = 4000
MAX_CHECKS = 48  # two descriptors per waiting child must fit RLIMIT_NOFILE (64); the host splits bigger batches


class Kid:
    __slots__ = ("pid", "reply_fd")

    def __init__(self, pid: int, reply_fd: int) -> None:
        self.pid, self.reply_fd = pid, reply_fd


def _read_exact(fd: int, n: int, deadline: float) -> bytes | None:
    """n bytes, or None on EOF; raises TimeoutError at the deadline."""
    chunks, got = [], 0
    while got < n:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            raise TimeoutError
        chunk = os.read(fd, n - got)
        if not chunk:
            return None
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def read_reply(fd: int, deadline: float) -> tuple[dict | None, str | None]:
    """(reply, None), or (None, why not) for a reply that breaks the rules, or (None, None) on EOF.
    Raises TimeoutError."""
    head = _read_exact(fd, 4, deadline)
    if head is None:
        return None, None
    size = HEADER.unpack(head)[0]
    if size > REPLY_CAP:
        return None, f"crash: reply of {size} bytes exceeds the cap of {REPLY_CAP} bytes"
    body = _read_exact(fd, size, deadline)
    if body is None:
        return None, None
    try:
        reply = jail_json.loads(body, REPLY_DEPTH)
    except jail_json.JSONLimitError as exc:
        return None, f"crash: garbage on the wire (reply refused: {exc})"
    passed, error = (reply.get("passed"), reply.get("error")) if isinstance(reply, dict) else (None, None)
    if (not isinstance(reply, dict) or set(reply) != {"passed", "error"} or (passed is not None and type(passed) is not bool)
            or (error is not None and not isinstance(error, str)) or (passed is None and error is None)):
        return None, f"crash: garbage on the wire (check reply {str(reply)[:80]!r})"
    return reply, None


def fate(status: int) -> str:
    """A child that did not reply: why, from its exit status."""
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        if sig == signal.SIGXCPU:
            return "timeout: the check exceeded its CPU-time limit (SIGXCPU); the process was killed"
        try:
            name = signal.Signals(sig).name
        except ValueError:
            name = str(sig)
        hint = " (killed from outside: the unit's memory cap?)" if sig == signal.SIGKILL else ""
        return f"crash: the check process died from {name}{hint}"
    if os.WIFEXITED(status):
        return f"crash: the check process exited with status {os.WEXITSTATUS(status)} without replying"
    return "crash: the check process ended without replying"


def close_all_but(fd: int) -> None:
    os.closerange(3, fd)
    os.closerange(fd + 1, 1 << 16)


def fit_pipe(reply: str) -> bytes:
    """The reply, shortened to fit one pipe page: the supervisor reads it only after the child ended, so a
    write the pipe cannot hold would block the child until its deadline (a pipe may hold a single page
    when the uid has many pipes open)."""
    data = reply.encode("utf-8")
    if len(data) + HEADER.size <= PIPE_SAFE:
        return data
    error = str(json.loads(reply).get("error"))
    while len(data) + HEADER.size > PIPE_SAFE:
        error = error[:len(error) * 3 // 4]
        data = json.dumps({"passed": None, "error": error + " [...]"}).encode()
    return data


def fork_kid(source: str, states: dict, timeout_s: float, rules, run_check) -> Kid:
    """A child for one check, hardened and stopped (the supervisor waits for the stop); raises OSError.
    `rules`: the seccomp process rules to stack (None when the pool runs without seccomp)."""
    reply_r, reply_w = os.pipe()
    try:
        pid = os.fork()
    except OSError:
        os.close(reply_r)
        os.close(reply_w)
        raise
    if pid == 0:
        code = INTERNAL_ERROR
        try:
            close_all_but(reply_w)
            # not its namespace's init: the kernel's default action ends a CPU window, even inside one C call
            signal.signal(signal.SIGXCPU, signal.SIG_DFL)
            if rules is not None and rules.load(os.getpid()) is not None:
                os._exit(INTERNAL_ERROR)
            signal.pthread_sigmask(signal.SIG_SETMASK, ())
            os.kill(os.getpid(), signal.SIGSTOP)  # resumed by the supervisor when this check's turn comes
            reply = fit_pipe(run_check({"source": source, "states": states, "cpu_s": timeout_s}))
            view = memoryview(HEADER.pack(len(reply)) + reply)  # one write, under PIPE_BUF: never torn
            while view:
                view = view[os.write(reply_w, view):]
            code = 0
        finally:
            os._exit(code)
    os.close(reply_w)
    return Kid(pid, reply_r)


def wait_stopped(kid: Kid) -> int | None:
    """Wait until the child stopped itself (hardened, ready); None when it did, else its exit status."""
    _, status = os.waitpid(kid.pid, os.WUNTRACED)
    if os.WIFSTOPPED(status):
        return None
    os.close(kid.reply_fd)
    return status


def run_one(kid: Kid, timeout_s: float) -> tuple[bool | None, str | None]:
    """Resume a stopped child and wait for it to end (one wake-up, on SIGCHLD, which the supervisor keeps
    blocked); its one reply is then waiting in its pipe. A child still alive at its deadline is killed
    first; a complete frame it wrote before counts all the same (as if it had been read at once)."""
    os.kill(kid.pid, signal.SIGCONT)
    deadline = time.monotonic() + timeout_s
    timed_out = False
    while True:
        done, status = os.waitpid(kid.pid, os.WNOHANG)  # stops are not reported: no WUNTRACED
        if done:
            break
        left = deadline - time.monotonic()
        if left <= 0:
            os.kill(kid.pid, signal.SIGKILL)
            status, timed_out = os.waitpid(kid.pid, 0)[1], True
            break
        signal.sigtimedwait([signal.SIGCHLD], left)
    try:  # the child is gone, so the pipe holds all it wrote and then EOF: this never waits
        reply, problem = read_reply(kid.reply_fd, time.monotonic() + 1.0)
    except TimeoutError:
        reply, problem = None, None
    finally:
        os.close(kid.reply_fd)
    if reply is not None:
        return reply["passed"], reply["error"]
    if problem is None and timed_out:
        problem = f"timeout: the check exceeded its {timeout_s:g} s wall-clock limit; the process was killed"
    return None, problem or fate(status)


def run_batch(request: dict, rep_fd: int, limits: dict, run_check, dumps, write_frame) -> None:
    """Serve one batch: fork every child, then run them one at a time, one frame per check to the host."""
    states, sources = request["states"], request["checks"]
    timeout_s = float(request.get("cpu_s", 5.0))
    kids: list = []
    rules = ChildRules() if limits.get("seccomp") else None
    gc.freeze()  # the children's collector never walks (and so never copies) the supervisor's objects
    signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGCHLD])  # waited for with sigtimedwait (run_one)
    for src in sources:
        try:
            kids.append(fork_kid(src, states, timeout_s, rules, run_check))
        except OSError as exc:
            kids.append(f"crash: could not fork the check process: {exc}")
    early = [kid if isinstance(kid, str) else wait_stopped(kid) for kid in kids]
    for i, kid in enumerate(kids):
        if isinstance(early[i], str):
            passed, error = None, early[i]
        elif early[i] is not None:
            passed, error = None, fate(early[i])
        else:
            passed, error = run_one(kid, timeout_s)
        if isinstance(error, str) and len(error) > ERROR_CHARS:
            error = error[:ERROR_CHARS]
        write_frame(rep_fd, dumps({"i": i, "passed": passed, "error": error}))
