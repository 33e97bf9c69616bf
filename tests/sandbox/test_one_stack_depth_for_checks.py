"""A check reaches the same recursion depth wherever it runs: in a batch of one or of many, under another
hash seed's check zygote (verification's repeats), in a unit of its own. The audit once ran checks 986
frames from the limit and the gym 987, so `f(0) == 986` was verified and then paid its own reference
solution 0.0 (outside check rt14-A F4): `sandbox.worker.run_check`, the one function that runs a check,
sets the limit relative to the depth it is called at."""

from __future__ import annotations

from sandbox import SandboxPool
from sandbox.checks import run_checks, run_checks_per_unit

DEPTH = ("def check_func(final_state):\n    def f(n):\n        try:\n            return f(n + 1)\n"
         "        except RecursionError:\n            return n\n    raise ValueError('DEPTH %d' % f(0))\n")
HONEST = "def check_func(final_state):\n    return final_state['credits'] == 5\n"
STATE = {"credits": 5}


def _depths(outcomes) -> list[str]:
    return [o.error.rsplit("DEPTH ", 1)[-1].strip() for o in outcomes if o.error and "DEPTH" in o.error]


def test_a_check_reaches_one_depth_alone_in_a_batch_among_others_under_another_seed_and_in_its_own_unit(
        jail: SandboxPool) -> None:
    alone = run_checks(jail, [DEPTH], STATE, STATE, 5.0)
    among = run_checks(jail, [HONEST, DEPTH, HONEST], STATE, STATE, 5.0)
    reseeded = run_checks(jail, [DEPTH], STATE, STATE, 5.0, repeat=1)
    own_unit = run_checks_per_unit(jail, [DEPTH], STATE, STATE, 5.0)
    seen = _depths(alone) + _depths(among) + _depths(reseeded) + _depths(own_unit)
    assert len(seen) == 4, (alone, among, reseeded, own_unit)
    assert len(set(seen)) == 1, seen

