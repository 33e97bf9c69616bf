"""run_checks: one outcome per check; errors, non-bools and timeouts are `passed=None`."""

from __future__ import annotations

from sandbox import SandboxPool

INITIAL = {"items": {"a": 1}}
FINAL = {"items": {"a": 1, "b": 2}}


def test_outcomes_in_order_with_initial_state_as_a_global(sandbox_pool: SandboxPool) -> None:
    checks = [
        "def check_func(final_state):\n    return 'b' in final_state['items'] and 'b' not in initial_state['items']\n",
        "def check_func(final_state):\n    return len(final_state['items']) == 5\n",
    ]
    out = sandbox_pool.run_checks(checks, INITIAL, FINAL)
    assert [o.passed for o in out] == [True, False]
    assert all(o.error is None for o in out)


def test_bad_checks_are_unscored_with_a_reason(jail: SandboxPool) -> None:
    checks = [
        "def check_func(final_state):\n    return 1\n",
        "def check_func(final_state):\n    return final_state['missing']\n",
        "def check_func(final_state:\n",
        "x = 1\n",
        "def check_func(final_state):\n    while True:\n        pass\n",
        "import os\ndef check_func(final_state):\n    os._exit(3)\n",
        "def check_func(final_state):\n    return True\n",
    ]
    out = jail.run_checks(checks, INITIAL, FINAL, timeout_s=0.5)
    assert [o.passed for o in out] == [None] * 6 + [True]
    assert "returned int, not bool" in out[0].error
    assert "KeyError" in out[1].error
    assert "SyntaxError" in out[2].error
    assert "no callable check_func" in out[3].error
    assert out[4].error.startswith("timeout")
    assert out[5].error.startswith("crash")


def test_a_check_cannot_mutate_what_the_next_check_sees(sandbox_pool: SandboxPool) -> None:
    checks = ["def check_func(s):\n    s['items'].clear()\n    initial_state.clear()\n    return True\n",
              "def check_func(s):\n    return s == " + repr(FINAL) + " and initial_state == " + repr(INITIAL) + "\n"]
    assert [o.passed for o in sandbox_pool.run_checks(checks, INITIAL, FINAL)] == [True, True]
