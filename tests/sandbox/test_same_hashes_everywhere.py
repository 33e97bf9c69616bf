"""Every jail interpreter runs with one fixed hash seed: str/bytes hash() and so the iteration order of a
set of strings are the same in every zygote, every unit and every replay, so a class whose state is built
from `list(some_set)` or from `hash(...)` gives the same state for the same calls wherever it runs."""

from __future__ import annotations

import pytest

from envscaler_core.config import SandboxSettings
from sandbox import SandboxPool
from tests.sandbox.helpers import attack_code

WHAT_HASHES_DECIDE = attack_code("""
    words = {'alice', 'bob', 'carol', 'dave', 'erin', 'frank', 'grace', 'heidi', 'ivan', 'judy'}
    return {'order': list(words), 'hash': hash(('alice', 'M7', 3)), 'bytes': hash(b'envscaler'),
            'randomized': sys.flags.hash_randomization}
""")


def _seen_by_a_fresh_zygote(**settings: object) -> dict:
    with SandboxPool(SandboxSettings(workers=1, **settings)) as pool:
        with pool.open_episode(WHAT_HASHES_DECIDE, "Attack", None) as ep:
            out = ep.call("attack", {})
            assert out.ok, out
            return out.result


def test_two_zygotes_order_a_set_of_strings_alike_and_hash_alike() -> None:
    first, second = _seen_by_a_fresh_zygote(), _seen_by_a_fresh_zygote()
    assert first["randomized"] == 0
    assert first == second


def test_the_weak_backend_fixes_the_same_seed(canary: str) -> None:
    assert _seen_by_a_fresh_zygote(backend="rlimit", allow_weak=True) == _seen_by_a_fresh_zygote()


def test_the_seed_is_the_only_python_variable_the_jail_sees(canary: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Dropping -E for the seed lets no other PYTHON* variable of the host in (the jail's environment is
    PATH and the seed; bwrap adds PWD and the interpreter LC_CTYPE)."""
    monkeypatch.setenv("PYTHONHASHSEED", "123")
    monkeypatch.setenv("PYTHONPATH", "/tmp/evil")
    monkeypatch.setenv("PYTHONINSPECT", "1")
    with SandboxPool(SandboxSettings(workers=1)) as pool:
        with pool.open_episode(attack_code("return dict(os.environ)"), "Attack", None) as ep:
            out = ep.call("attack", {})
    assert out.ok
    assert {k: v for k, v in out.result.items() if k.startswith("PYTHON")} == {"PYTHONHASHSEED": "0"}
    assert "/tmp/evil" not in str(out.result) and canary not in str(out.result)
