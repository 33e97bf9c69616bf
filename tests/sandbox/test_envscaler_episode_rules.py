"""Spec: an episode opened with `rules="envscaler"` plays EnvScaler's `step` in the jail (differential re-check
2026-11-26, F1/F2/F6): a result the wire cannot carry comes back as its text, a raise in that text is the
tool's raise, and a raising tool's state change is kept; a state the wire cannot carry is still undone.
Episodes opened without the flag keep the factory's rules."""

from __future__ import annotations

import pytest

from envscaler_core.runtime import EnvLoadError
from sandbox import SandboxPool

CODE = '''
class Opaque:
    def __repr__(self):
        return "<opaque>"


class BadRepr:
    def __repr__(self):
        raise ValueError("no text")


class Shelf:
    def __init__(self, config):
        self.items = config.get("items", [])

    def put(self, item: str, mode: str = "") -> dict:
        self.items.append(item)
        if mode == "boom":
            raise RuntimeError("ledger write failed")
        if mode == "opaque":
            return {"ok": True, "ref": Opaque()}
        if mode == "badrepr":
            return {"ok": True, "ref": BadRepr()}
        if mode == "store":
            self.ref = Opaque()
        return {"ok": True}
'''


def _put(pool: SandboxPool, mode: str, rules: str = "envscaler") -> tuple[object, dict]:
    with pool.open_episode(CODE, "Shelf", {"items": []}, rules=rules) as ep:
        outcome = ep.call("put", {"item": "x", "mode": mode})
        return outcome, ep.state


def test_a_result_the_wire_cannot_carry_is_its_text_and_the_change_stays(jail: SandboxPool) -> None:
    outcome, state = _put(jail, "opaque")
    assert outcome.ok and outcome.result == "{'ok': True, 'ref': <opaque>}"
    assert state == {"items": ["x"]}


def test_a_raise_in_the_results_text_is_the_tools_raise(jail: SandboxPool) -> None:
    outcome, state = _put(jail, "badrepr")
    assert not outcome.ok and outcome.error_kind == "exception" and "ValueError: no text" in outcome.error
    assert state == {"items": ["x"]}


def test_a_raising_tools_state_change_is_kept(jail: SandboxPool) -> None:
    outcome, state = _put(jail, "boom")
    assert outcome.error_kind == "exception" and outcome.state == {"items": ["x"]}
    assert state == {"items": ["x"]}


def test_a_raising_tools_kept_change_is_in_its_state_diff(jail: SandboxPool) -> None:
    """The diff describes the committed change (docs/sandbox.md: no change is `{}`), not "nothing happened"."""
    outcome, _ = _put(jail, "boom")
    assert outcome.error_kind == "exception"
    assert outcome.state_diff == {"changes": [{"op": "add", "path": "/items/0", "new": "x"}]}


def test_a_state_the_wire_cannot_carry_is_still_undone(jail: SandboxPool) -> None:
    outcome, state = _put(jail, "store")
    assert outcome.error_kind == "unserializable" and state == {"items": []}


@pytest.mark.parametrize("mode", ["opaque", "boom"])
def test_factory_episodes_keep_their_rules(jail: SandboxPool, mode: str) -> None:
    outcome, state = _put(jail, mode, rules="factory")
    assert outcome.error_kind == ("unserializable" if mode == "opaque" else "exception")
    assert state == {"items": []}


def test_unknown_rules_are_refused_by_name(jail: SandboxPool) -> None:
    with pytest.raises(EnvLoadError, match="episode rules 'bfcl' are neither"):
        jail.open_episode(CODE, "Shelf", {}, rules="bfcl")
