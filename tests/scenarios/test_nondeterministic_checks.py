"""Spec: a check must be a function of the state. One whose verdict depends on randomness or the clock
(`random.random() < 0.5`, `credits == 4 or time.time() > T`) paid do-nothing episodes 1.0 at random or
after T once it had passed a single evaluation per state (outside check rt9-A, F1); verification now
refuses it as `nondeterministic`: statically, when its code names a source of randomness or the clock,
and dynamically, when separate evaluations of the same state disagree."""

from __future__ import annotations

import json
import subprocess

import pytest

from envscaler_core.models.scenario import CheckSpec
from envscaler_core.scenarios import verify_scenario
from envscaler_core.scenarios.determinism import is_nondeterministic, repeated
from tests.scenarios.helpers import LENT_B1, library_env, scenario

TIMEOUT = 2.0
LENT = "final_state['books']['b1']['status'] == 'lent'"


def _check(body: str, head: str = "") -> CheckSpec:
    return CheckSpec(item="b1 is lent", code=f"{head}def check_func(final_state):\n    return {body}\n")


@pytest.mark.parametrize(("head", "body", "named"), [
    ("import random\n", "random.random() < 0.5", "random"),
    ("import time\n", f"{LENT} or time.time() > 1e12", "time.time"),
    ("from datetime import datetime\n", f"{LENT} or datetime.now().year > 3000", "now"),
    ("import datetime\n", f"{LENT} and datetime.date.today().year > 2000", "today"),
    ("import uuid\n", f"{LENT} and uuid.uuid4().int % 2 == 0", "uuid"),
    ("import secrets\n", f"{LENT} and secrets.randbelow(2) == 0", "secrets"),
    ("import os\n", f"{LENT} and os.urandom(1)[0] % 2 == 0", "import os"),
    ("", f"{LENT} and id(final_state) % 2 == 0", "id()"),
    ("", f"{LENT} and hash('b1') % 2 == 0", "hash()"),
])
def test_a_check_naming_randomness_or_the_clock_is_refused_as_nondeterministic(
        runtime, head: str, body: str, named: str) -> None:
    report = verify_scenario(scenario([_check(body, head)]), library_env(), runtime, TIMEOUT)
    assert not report.ok and report.failure == "nondeterministic", report.reason
    assert report.checks[0].problem == "nondeterministic"
    assert named in (report.reason or ""), report.reason


def test_a_check_whose_repeated_evaluations_disagree_is_refused_as_nondeterministic(runtime) -> None:
    # The static rule leaves no coin a check can name, so the repeats (its backstop) are seen here with
    # the scan judging other code (`static`, as the import does for its wrapped checks). A fair coin agrees
    # with itself on 12 evaluations of a state with chance 2 * 0.5**12, 1 in 2,048.
    coin = _check("random.random() < 0.5", head="import random\n").code
    state = {"books": {}}
    [outcome] = repeated([coin], lambda sources, repeat: runtime.run_checks(sources, state, state, TIMEOUT, repeat), 12,
                         static=[_check("True").code])
    assert is_nondeterministic(outcome.error), outcome
    assert "evaluations of the same state" in (outcome.error or ""), outcome.error


def _order_under_seed_zero(words: list[str], python: str) -> list[str]:
    """How a set of `words` iterates in every episode's interpreter (hash seed 0)."""
    out = subprocess.run([python, "-S", "-c", f"import json; print(json.dumps(list(set({words!r}))))"],
                         capture_output=True, text=True, env={"PYTHONHASHSEED": "0"}, check=True)
    return json.loads(out.stdout)


def test_a_check_whose_verdict_hangs_on_str_hash_order_is_refused_as_nondeterministic(runtime) -> None:
    # Under seed 0 alone it passes every evaluation (outside check rt10-C, F2): EnvScaler's runtime, one
    # seed per process, paid such a solution about 1 run in 4. The repeats run under seeds drawn at random;
    # twelve strings in seed 0's order under both is about 1 in 12! squared.
    words = [f"w{i}" for i in range(12)]
    order = _order_under_seed_zero(words, runtime.backend.python)
    check = _check(f"{LENT} and list(set({words!r})) == {order!r}")
    report = verify_scenario(scenario([LENT_B1, check]), library_env(), runtime, TIMEOUT)
    assert not report.ok and report.failure == "nondeterministic", report.reason
    assert "hash seed 0 and 2 drawn at random" in (report.reason or ""), report.reason


def test_a_check_comparing_sets_as_sets_is_verified(runtime) -> None:
    check = _check(f"{LENT} and set(final_state['books']) | {{'alpha', 'beta'}} >= {{'alpha', 'beta', 'b1'}}")
    report = verify_scenario(scenario([LENT_B1, check]), library_env(), runtime, TIMEOUT)
    assert report.ok, report.reason


def test_a_check_reading_dates_and_times_from_the_state_is_still_verified(runtime) -> None:
    parsing = _check(f"{LENT} and datetime.strptime('2026-01-02', '%Y-%m-%d').year == 2026 "
                     "and final_state.get('time', 0) == 0", head="from datetime import datetime\nimport time\n")
    report = verify_scenario(scenario([LENT_B1, parsing]), library_env(), runtime, TIMEOUT)
    assert report.ok, report.reason


def test_every_check_is_evaluated_more_than_once_on_each_state(runtime) -> None:
    report = verify_scenario(scenario(), library_env(), runtime, TIMEOUT)
    assert report.ok and report.evaluations >= 2
