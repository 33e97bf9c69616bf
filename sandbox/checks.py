"""Check functions: `check_func(final_state) -> bool`, scored so that no check can touch another's outcome.

The fast path (`run_checks`): one isolation unit per batch (or per slice of a big batch, one slice per
zygote, run concurrently), whose pid 1 is a trusted supervisor (jail_batch.py) that parses the states
once and forks one child per check before any check runs; the children then run one at a time, each
on its own copy-on-write copy, each answering on its own pipe, each killed and reaped before the next.
The unit itself is made, verified and capped exactly like an episode's (own namespaces, private /proc,
cgroup, host-side verification), so a batch cannot reach another unit, the zygote or the host.

If a batch's unit fails mid-way (its supervisor died or sent garbage: no check should be able to cause
that, but the host does not assume it), the check that was running gets that failure and the checks
after it run again in a fresh unit, so even then one check cannot change the outcome of a later one.

`run_checks_per_unit` is the design before it (one unit per check): kept as the benchmark's baseline.
"""

from __future__ import annotations

import json
import logging
import time
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from envscaler_core.runtime import CheckOutcome
from sandbox.child import Child, ChildFailure, encode
from sandbox.zygote import ZygoteError

if TYPE_CHECKING:
    from sandbox.pool import SandboxPool

log = logging.getLogger("sandbox")
MAX_ERROR_CHARS = 4000
MAX_CHECKS_PER_UNIT = 48  # = jail_batch.MAX_CHECKS: a waiting child holds descriptors under RLIMIT_NOFILE
CHECKS_PER_SLICE = 4  # smaller batches stay in one unit: a second unit costs more than it saves
FORK_ALLOWANCE_S = 0.05  # per check, before the first reply: the supervisor forks every child first
SUPERVISOR_SLACK_S = 5.0  # the supervisor enforces each check's limit itself; this is the host's backstop


def _states(initial_state: dict[str, Any], final_state: dict[str, Any]) -> bytes | str:
    try:
        return json.dumps({"initial_state": initial_state, "final_state": final_state}, allow_nan=False).encode()
    except (TypeError, ValueError, RecursionError) as exc:
        return f"states are not JSON-serialisable: {exc}"


def run_checks(pool: SandboxPool, checks: list[str], initial_state: dict[str, Any], final_state: dict[str, Any],
               timeout_s: float, repeat: int = 0) -> list[CheckOutcome]:
    """`repeat` 0: the pool's zygotes, a slice per zygote; another: the pool's check zygote for that repeat
    (`SandboxPool.check_zygote`, a seed drawn at random), one slice at a time."""
    states = _states(initial_state, final_state)
    if isinstance(states, str):
        return [CheckOutcome(passed=None, error=states) for _ in checks]
    outcomes: list[CheckOutcome | None] = [
        None if isinstance(src, str) else
        CheckOutcome(passed=None, error=f"check source must be a string, got {type(src).__name__}") for src in checks]
    todo = [i for i, src in enumerate(checks) if isinstance(src, str)]
    slices = _slices(todo, len(pool.zygotes) if repeat == 0 else 1)

    def score(indices: list[int]) -> None:
        try:
            results = _run_slice(pool, [checks[i] for i in indices], states, timeout_s, repeat)
        except Exception as exc:  # noqa: BLE001 - nothing a unit sends may raise out of run_checks
            log.exception("sandbox: unexpected error while running a check batch")
            results = [CheckOutcome(passed=None, error=f"crash: internal sandbox error: {type(exc).__name__}: {exc}")
                       for _ in indices]
        for i, outcome in zip(indices, results):
            outcomes[i] = outcome

    if len(slices) <= 1:
        for part in slices:
            score(part)
    else:
        with ThreadPoolExecutor(min(len(slices), len(pool.zygotes)), thread_name_prefix="sandbox-checks") as ex:
            list(ex.map(score, slices))
    return [o for o in outcomes if o is not None]


def _slices(todo: list[int], zygotes: int) -> list[list[int]]:
    """Contiguous slices: one per zygote when the batch is big enough, none over MAX_CHECKS_PER_UNIT."""
    if not todo:
        return []
    count = max(1, min(zygotes, len(todo) // CHECKS_PER_SLICE), -(-len(todo) // MAX_CHECKS_PER_UNIT))
    size = -(-len(todo) // count)
    return [todo[k:k + size] for k in range(0, len(todo), size)]


def _run_slice(pool: SandboxPool, sources: list[str], states: bytes, timeout_s: float,
               repeat: int) -> list[CheckOutcome]:
    """Outcomes of `sources`, in order; a unit that fails mid-way costs only the check it was running."""
    results: list[CheckOutcome] = []
    while len(results) < len(sources):
        results.extend(_one_unit(pool, sources[len(results):], states, timeout_s, repeat))
    return results


def _one_unit(pool: SandboxPool, sources: list[str], states: bytes, timeout_s: float,
              repeat: int) -> list[CheckOutcome]:
    """Outcomes for a prefix of `sources` (all of them unless the unit failed; then the last one is that
    failure)."""
    payload = (b'{"op":"batch","cpu_s":' + encode(timeout_s) + b',"checks":' + encode(sources)
               + b',"states":' + states + b"}")
    try:
        child = pool.spawn_child(kind="batch") if repeat == 0 else pool.spawn_check_unit(repeat)
    except ZygoteError as exc:
        return [CheckOutcome(passed=None, error=f"crash: the sandbox could not start a unit: {exc}") for _ in sources]
    out: list[CheckOutcome] = []
    try:
        t0 = time.perf_counter()
        child.send(payload, timeout_s + SUPERVISOR_SLACK_S)
        for i in range(len(sources)):
            allowance = FORK_ALLOWANCE_S * len(sources) if i == 0 else 0.0
            reply = child.receive(timeout_s + SUPERVISOR_SLACK_S + allowance)
            outcome = _outcome(reply, i, child)
            now = time.perf_counter()
            outcome.elapsed_ms = round((now - t0) * 1000, 3)
            t0 = now
            out.append(outcome)
            if outcome.error is not None and outcome.error.startswith("crash: garbage from the batch supervisor"):
                break
    except ChildFailure as exc:
        out.append(CheckOutcome(passed=None, error=f"{exc.kind}: the batch's unit failed while this check ran: "
                                                   f"{exc.message}"[:MAX_ERROR_CHARS]))
    finally:
        pool.release(child)
    return out


def _outcome(reply: dict[str, Any], index: int, child: Child) -> CheckOutcome:
    passed, error = reply.get("passed"), reply.get("error")
    if set(reply) != {"i", "passed", "error"} or reply.get("i") != index \
            or (passed is not None and type(passed) is not bool) or (error is not None and not isinstance(error, str)) \
            or (passed is None and error is None):
        return CheckOutcome(passed=None, error=f"crash: garbage from the batch supervisor ({str(reply)[:80]!r})")
    if passed is None and "SIGKILL" in error and child.memory_cap_hit():
        error = (f"crash: the check exceeded the unit's memory cap ({child.limits.unit_memory_bytes() >> 20} MiB) "
                 "and the kernel killed it")
    return CheckOutcome(passed=passed, error=None if passed is not None else error[:MAX_ERROR_CHARS])


# -- the design before: one unit per check (benchmark baseline) ------------------------------------------------
def run_checks_per_unit(pool: SandboxPool, checks: list[str], initial_state: dict[str, Any],
                        final_state: dict[str, Any], timeout_s: float) -> list[CheckOutcome]:
    states = _states(initial_state, final_state)
    if isinstance(states, str):
        return [CheckOutcome(passed=None, error=states) for _ in checks]

    def timed(src: str) -> CheckOutcome:
        t0 = time.perf_counter()
        try:
            outcome = _per_unit(pool, src, states, timeout_s)
        except Exception as exc:  # noqa: BLE001
            outcome = CheckOutcome(passed=None, error=f"crash: internal sandbox error: {type(exc).__name__}: {exc}")
        outcome.elapsed_ms = round((time.perf_counter() - t0) * 1000, 3)
        return outcome

    workers = min(len(checks), len(pool.zygotes))
    if workers <= 1:
        return [timed(src) for src in checks]
    with ThreadPoolExecutor(workers, thread_name_prefix="sandbox-checks") as ex:
        return list(ex.map(timed, checks))


def _per_unit(pool: SandboxPool, src: str, states: bytes, timeout_s: float) -> CheckOutcome:
    if not isinstance(src, str):
        return CheckOutcome(passed=None, error=f"check source must be a string, got {type(src).__name__}")
    payload = b'{"op":"check","cpu_s":' + encode(timeout_s) + b',"source":' + encode(src) + b',"states":' + states + b"}"
    try:
        child = pool.spawn_child()
    except ZygoteError as exc:
        return CheckOutcome(passed=None, error=f"crash: the sandbox could not start a unit: {exc}")
    try:
        reply = child.exchange(payload, timeout_s)
    except ChildFailure as exc:
        return CheckOutcome(passed=None, error=f"{exc.kind}: {exc.message}"[:MAX_ERROR_CHARS])
    finally:
        child.kill()
    passed, error = reply.get("passed"), reply.get("error")
    if set(reply) != {"passed", "error"} or (passed is not None and type(passed) is not bool) \
            or (error is not None and not isinstance(error, str)) or (passed is None and error is None):
        return CheckOutcome(passed=None, error=f"crash: garbage on the wire (check reply {str(reply)[:80]!r})")
    return CheckOutcome(passed=passed, error=None if passed is not None else error[:MAX_ERROR_CHARS])
