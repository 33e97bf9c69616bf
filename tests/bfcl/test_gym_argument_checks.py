"""Spec: the BFCL gym checks an action's arguments before building BFCL's call string; whatever is wrong
with them is an observation, never an exception out of step() (red team 7)."""

from __future__ import annotations

from typing import Any

from envscaler_core.gym import load_bfcl_set
from sandbox import SandboxPool


def _deep(depth: int) -> dict[str, Any]:
    top: dict[str, Any] = {}
    cur = top
    for _ in range(depth):
        cur["a"] = {}
        cur = cur["a"]
    return top


def _decoding_error(bfcl_pool: SandboxPool, action: Any) -> str:
    env = load_bfcl_set("base", bfcl_pool, limit=1)
    env.reset(options={"task_id": "multi_turn_base_0"})
    try:
        *_, info = env.step(action)
        assert info["turn"] == 1 and info["is_error"]
        return str(info["decoding_error"])
    finally:
        env.close()


def test_a_dict_argument_nested_past_the_recursion_limit_is_a_decoding_error(bfcl_pool: SandboxPool) -> None:
    """F4: it raised RecursionError out of step()."""
    error = _decoding_error(bfcl_pool, {"tool": "echo", "args": {"content": _deep(100_000)}})
    assert "arguments of 'echo' nest too deeply to render" in error
