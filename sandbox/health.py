"""The zygote health check: a real unit, made the way every episode's is, loads a tiny class and answers a call.

A `ping` proves only that the zygote's loop answers. The red team showed a zygote can answer pings and
still fail every load (its rlimits lowered from outside); this check exercises the whole path instead:
unit creation, the member's hardening, the host's verification of it, loading and a call with a state
change. The pool runs it after every zygote (re)start and after a load that crashed for no reason the
code explains; a zygote that fails it is replaced.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sandbox.child import Child, ChildFailure, encode
from sandbox.limits import SandboxLimits
from sandbox.zygote import ZygoteError

if TYPE_CHECKING:
    from sandbox.cgroups import Cgroups
    from sandbox.zygote import Zygote

PROBE_CODE = '''
class Probe:
    def __init__(self, init_config=None):
        self.n = (init_config or {}).get("n", 0)

    def bump(self, k: int) -> int:
        self.n += k
        return self.n
'''
PROBE_LOAD = encode({"op": "load", "code": PROBE_CODE, "class_name": "Probe", "init": {"n": 40}, "restore": None,
                     "cpu_s": 5.0})
PROBE_CALL = encode({"op": "call", "tool": "bump", "args": {"k": 2}})


def health_problem(zygote: Zygote, limits: SandboxLimits, cgroups: Cgroups | None, timeout_s: float) -> str | None:
    """None when `zygote` serves a real unit correctly, else what went wrong."""
    try:
        child = Child(zygote, limits, cgroups, freeze_between_calls=False)
    except ZygoteError as exc:
        return f"no unit: {exc}"
    try:
        loaded = child.exchange(PROBE_LOAD, timeout_s)
        if loaded != {"ok": True, "state": {"n": 40}, "loaded": ["n"], "output": ""}:
            return f"the probe class loaded as {str(loaded)[:200]}"
        called = child.exchange(PROBE_CALL, timeout_s)
        if called != {"ok": True, "result": 42, "output": "", "state": {"n": 42}}:
            return f"the probe call answered {str(called)[:200]}"
        return None
    except ChildFailure as exc:
        return f"the probe unit failed: {exc.kind}: {exc.message}"
    finally:
        child.kill()
