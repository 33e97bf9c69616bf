"""Check functions: `check_func(final_state) -> bool` sources run in one fresh child per batch.

A check that times out or crashes kills its child; the remaining checks continue in a new one, so
one bad check never costs the others their score.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from envscaler_core.runtime import CheckOutcome
from sandbox.child import Child, ChildFailure, encode
from sandbox.zygote import ZygoteError

if TYPE_CHECKING:
    from sandbox.pool import SandboxPool


def run_checks(pool: SandboxPool, checks: list[str], initial_state: dict[str, Any], final_state: dict[str, Any],
               timeout_s: float) -> list[CheckOutcome]:
    try:
        states = encode({"initial_state": initial_state, "final_state": final_state})
    except (TypeError, ValueError) as exc:
        return [CheckOutcome(passed=None, error=f"states are not JSON-serialisable: {exc}") for _ in checks]
    outcomes: list[CheckOutcome] = []
    child: Child | None = None
    try:
        for src in checks:
            t0 = time.perf_counter()
            outcome = _one(pool, src, states, timeout_s, child)
            child = outcome[1]
            outcome[0].elapsed_ms = round((time.perf_counter() - t0) * 1000, 3)
            outcomes.append(outcome[0])
    finally:
        if child is not None:
            child.kill()
    return outcomes


def _one(pool: SandboxPool, src: str, states: bytes, timeout_s: float,
         child: Child | None) -> tuple[CheckOutcome, Child | None]:
    if not isinstance(src, str):
        return CheckOutcome(passed=None, error=f"check source must be a string, got {type(src).__name__}"), child
    try:
        if child is None:
            child = pool.spawn_child("checks")
            child.send(states, timeout_s)
        reply = child.exchange(encode({"source": src}), timeout_s)
    except ChildFailure as exc:
        return CheckOutcome(passed=None, error=f"{exc.kind}: {exc.message}"), None
    except ZygoteError as exc:
        return CheckOutcome(passed=None, error=f"crash: {exc}"), None
    passed = reply.get("passed")
    if passed is not None and type(passed) is not bool:
        child.kill()
        return CheckOutcome(passed=None, error="garbage on the wire (passed is not a bool)"), None
    error = reply.get("error")
    return CheckOutcome(passed=passed, error=None if passed is not None else str(error or "check failed")), child
