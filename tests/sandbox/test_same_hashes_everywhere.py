"""Every jail interpreter runs with one fixed hash seed: str/bytes hash() and so the iteration order of a
set of strings are the same in every zygote, every unit and every replay, so a class whose state is built
from `list(some_set)` or from `hash(...)` gives the same state for the same calls wherever it runs."""

from __future__ import annotations

import pytest

from envscaler_core.config import SandboxSettings
from sandbox import SandboxPool
from tests.sandbox.helpers import attack_code, attack_in_a_fresh_pool

WHAT_HASHES_DECIDE = attack_code("""
    words = {'alice', 'bob', 'carol', 'dave', 'erin', 'frank', 'grace', 'heidi', 'ivan', 'judy'}
    return {'order': list(words), 'hash': hash(('alice', 'M7', 3)), 'bytes': hash(b'envscaler'),
            'randomized': sys.flags.hash_randomization}
""")


def _seen_by_a_fresh_zygote(**settings: object) -> dict:
    return attack_in_a_fresh_pool(WHAT_HASHES_DECIDE, **settings)


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


WORDS = [f"w{i}" for i in range(12)]


def test_check_repeats_run_in_their_own_jails_under_seeds_drawn_at_random() -> None:
    """Every episode keeps seed 0; a check's repeats (scenarios/determinism.py) run in jails started with
    seeds the pool drew at random, so a set of strings iterates there as in another process, and no check
    can be tuned to them (rt12-B F3: fixed seeds 1 and 2 were)."""
    seed_zero_order = attack_in_a_fresh_pool(attack_code(f"return list(set({WORDS!r}))"))
    same = f"def check_func(final_state):\n    return list(set({WORDS!r})) == {seed_zero_order!r}\n"
    with SandboxPool(SandboxSettings(workers=1)) as pool, SandboxPool(SandboxSettings(workers=1)) as other:
        verdicts = [pool.run_checks([same], {}, {}, 5.0, repeat=r)[0].passed for r in (0, 1, 2, 1)]
        seeds = [z.hello["hash_seed"] for z in (*pool.zygotes, pool.check_zygote(1), pool.check_zygote(2))]
        other_seeds = [other.check_zygote(r).hello["hash_seed"] for r in (1, 2)]
        with pool.open_episode(WHAT_HASHES_DECIDE, "Attack", None) as ep:
            episode_order = ep.call("attack", {}).result["order"]
    assert verdicts == [True, False, False, False]  # twelve strings in seed 0's order: ~1 in 12! by chance
    assert seeds[0] == "0" and len(set(seeds)) == 3 and all(s.isdigit() for s in seeds)
    assert set(other_seeds).isdisjoint(seeds[1:])  # drawn per pool, 1 in ~2**31 to meet
    assert episode_order == _seen_by_a_fresh_zygote()["order"]
