"""Spec: the BFCL gym checks an action's arguments before building BFCL's call string; whatever is wrong
with them is an observation, never an exception out of step() (red team 7)."""

from __future__ import annotations

from typing import Any

from envscaler_core.gym import load_bfcl_set
from sandbox import SandboxPool
from tests.fixtures.values import nested_dict


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
    error = _decoding_error(bfcl_pool, {"tool": "echo", "args": {"content": nested_dict(100_000)}})
    assert "arguments of 'echo' nest too deeply to render" in error


def test_an_argument_key_that_is_no_identifier_is_refused_naming_it(bfcl_pool: SandboxPool) -> None:
    """F6: the key was spliced into the call string, so one recorded argument ran as two."""
    error = _decoding_error(bfcl_pool, {"tool": "echo", "args": {"content='injected', file_name": "inj.txt"}})
    assert "has the argument key \"content='injected', file_name\", which is not a Python identifier" in error
    assert "the argument key '1', which is not a Python identifier" in _decoding_error(bfcl_pool, {"tool": "echo", "args": {1: "x"}})


def test_argument_text_naming_a_key_twice_is_refused(bfcl_pool: SandboxPool) -> None:
    """F7: the last value won silently."""
    call = {"id": "c", "type": "function", "function": {"name": "echo", "arguments": '{"content":"a","content":"b"}'}}
    assert "name the key 'content' twice (JSON readers silently keep one)" in _decoding_error(bfcl_pool, call)


def test_an_integer_wider_than_64_bits_is_refused_naming_where(bfcl_pool: SandboxPool) -> None:
    """F8: the wire carries 64-bit integers."""
    error = _decoding_error(bfcl_pool, {"tool": "echo", "args": {"content": [1, 10**25]}})
    assert "echo/content/1: integer of 84 bits is outside the 64-bit range" in error
