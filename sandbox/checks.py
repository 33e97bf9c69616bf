"""Check functions: `check_func(final_state) -> bool`, each in its own isolation unit.

A check shares nothing with the others of its batch or with the env that produced the states: it runs
in a fresh unit (own namespaces, fresh interpreter state forked from the zygote), answers once and is
killed. So a check that patches builtins, the worker's serialiser or the reply pipe can only change its
own outcome; the host reads exactly one reply per unit, under the wire rules.
"""

from __future__ import annotations

import json
import logging
import time
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from envscaler_core.runtime import CheckOutcome
from sandbox.child import ChildFailure, encode
from sandbox.zygote import ZygoteError

if TYPE_CHECKING:
    from sandbox.pool import SandboxPool

log = logging.getLogger("sandbox")
MAX_ERROR_CHARS = 4000


def run_checks(pool: SandboxPool, checks: list[str], initial_state: dict[str, Any], final_state: dict[str, Any],
               timeout_s: float) -> list[CheckOutcome]:
    try:
        states = json.dumps({"initial_state": initial_state, "final_state": final_state}, allow_nan=False).encode()
    except (TypeError, ValueError, RecursionError) as exc:
        return [CheckOutcome(passed=None, error=f"states are not JSON-serialisable: {exc}") for _ in checks]
    def timed(src: str) -> CheckOutcome:
        t0 = time.perf_counter()
        try:
            outcome = _one(pool, src, states, timeout_s)
        except Exception as exc:  # noqa: BLE001 - nothing a unit sends may raise out of run_checks
            log.exception("sandbox: unexpected error while running a check")
            outcome = CheckOutcome(passed=None, error=f"crash: internal sandbox error: {type(exc).__name__}: {exc}")
        outcome.elapsed_ms = round((time.perf_counter() - t0) * 1000, 3)
        return outcome

    # The checks are independent units: run as many at once as there are zygotes (each makes its next unit
    # while the others' run), in order of the batch.
    workers = min(len(checks), len(pool.zygotes))
    if workers <= 1:
        return [timed(src) for src in checks]
    with ThreadPoolExecutor(workers, thread_name_prefix="sandbox-checks") as ex:
        return list(ex.map(timed, checks))


def _one(pool: SandboxPool, src: str, states: bytes, timeout_s: float) -> CheckOutcome:
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
