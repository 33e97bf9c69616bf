"""Spec: a tool call whose arguments are over `sandbox.limits.MAX_REQUEST_BYTES` as JSON is refused by the
host, naming the cap, before it reaches the jail; the episode goes on (red team round 6, F6: requests
had no cap, only replies had `frame_cap`)."""

from __future__ import annotations

from sandbox import SandboxPool
from sandbox.limits import MAX_REQUEST_BYTES

CODE = '''
class E:
    def __init__(self, init_config=None):
        self.n = 0

    def f(self, x=None) -> dict:
        """f"""
        self.n += 1
        return {"success": True, "data": self.n}
'''


def test_arguments_over_the_request_cap_are_refused_before_the_jail(sandbox_pool: SandboxPool) -> None:
    with sandbox_pool.open_episode(CODE, "E", {}) as ep:
        out = ep.call("f", {"x": "y" * MAX_REQUEST_BYTES})
        assert (out.ok, out.error_kind) == (False, "schema")
        assert f"over the {MAX_REQUEST_BYTES:,} a call may send" in (out.error or "")
        assert ep.call("f", {"x": "y" * 1000}).result == {"success": True, "data": 1}
