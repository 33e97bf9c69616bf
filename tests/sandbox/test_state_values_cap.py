"""Spec: a state or result holds at most `state_values_cap` values (containers and scalars), counted on the
text before anything is parsed, so a class cannot make the host hold ~1 GB from a 1 MB state (red team 7,
F5: `self.junk = [[] for _ in range(250000)]`, 1 MB of JSON under the character cap, made validation peak
at 1,069,920 KB of host RSS; now refused at load, 78 MB)."""

from __future__ import annotations

import json

import pytest

from envscaler_core.runtime import EnvLoadError
from sandbox import SandboxPool
from sandbox.frames import WireError, parse_reply
from sandbox.jail_json import count_values
from sandbox.limits import MAX_STATE_VALUES, SandboxLimits

JUNK = '''
class J:
    def __init__(self, init_config=None):
        self.junk = [[] for _ in range(init_config["n"])]

    def grow(self, n: int) -> dict:
        """grow"""
        self.junk = [[] for _ in range(n)]
        return {"success": True}

    def give(self, n: int) -> dict:
        """give"""
        return {"success": True, "data": [0] * n}
'''


def test_the_default_cap_is_far_above_what_honest_states_hold() -> None:
    assert SandboxLimits().state_values_cap == MAX_STATE_VALUES == 50_000  # demo envs' states: at most 108


def test_a_state_over_the_values_cap_does_not_load(sandbox_pool: SandboxPool) -> None:
    with pytest.raises(EnvLoadError, match=r"state holds 25000[0-9] values, over the cap of 50000 \(state_values_cap\)"):
        sandbox_pool.open_episode(JUNK, "J", {"n": 250_000})


def test_a_call_growing_the_state_past_the_cap_is_oversize_and_changes_nothing(sandbox_pool: SandboxPool) -> None:
    with sandbox_pool.open_episode(JUNK, "J", {"n": 10}) as ep:
        out = ep.call("grow", {"n": 60_000})
        assert not out.ok and out.error_kind == "oversize" and "values, over the cap of 50000" in (out.error or "")
        assert len(ep.state["junk"]) == 10
        big = ep.call("give", {"n": 60_000})
        assert not big.ok and big.error_kind == "oversize" and "the result holds 60003 values" in (big.error or "")
        assert ep.call("grow", {"n": 49_000}).ok


def test_a_reply_holding_more_values_is_refused_before_parsing() -> None:
    body = json.dumps({"ok": True, "state": {"junk": [[]] * 200_001}}).encode()
    with pytest.raises(WireError, match="reply of 200005 values, over the cap of 100064 values") as refused:
        parse_reply(body, 66, 2 * MAX_STATE_VALUES + 64)
    assert refused.value.kind == "oversize"


@pytest.mark.parametrize("value", [[], [[], {}], {"a,[": "x,{\\\"[", "b": [1, "\\", None, -1.5e3, True], "c": {}},
                                   "a,b", ["", ""], {"k": [{"x": [[]]}]}])
def test_values_are_counted_exactly_on_the_text(value: object) -> None:
    def walk(v: object) -> int:
        return 1 + sum(map(walk, v.values() if isinstance(v, dict) else v if isinstance(v, list) else ()))

    for indent in (None, 2):
        assert count_values(json.dumps(value, indent=indent).encode()) == walk(value)
