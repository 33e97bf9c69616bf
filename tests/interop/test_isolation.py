"""Spec: imported EnvScaler data is untrusted; each load, replay and check runs in its own isolation unit.

One import of a small hostile file set (one honest env, one env whose code attacks its sibling
scenarios, checks that patch builtins / json / copy's dispatch table, rewrite state, try to reach the
next check, or sleep forever). Every hostile item may decide its own verdict; none may change anyone
else's, so the honest checks come out exactly as they would alone."""

from __future__ import annotations

import json
from typing import Any

import pytest

from envscaler_core.models.interop import ImportedScenario
from envscaler_core.store import Store
from tests.interop.conftest import FIXTURES, run_import, settings_for, write_solutions

HONEST = "def check_func(final_state):\n    return final_state['books']['B2']['available'] is False"
VIA_JSON_AND_COPY = ("import json, copy\n"
                     "def check_func(final_state):\n"
                     "    seen = json.loads(json.dumps(copy.deepcopy(final_state)))\n"
                     "    return isinstance(seen, dict) and len(seen['loans']) == len(initial_state['loans']) + 1")
PATCHER = ("import builtins, json, copy, re\n"
           "builtins.isinstance = lambda *a: True\n"
           "builtins.len = lambda *a: 999\n"
           "builtins.bool = lambda *a: True\n"
           "json.loads = lambda *a, **k: {'forged': True}\n"
           "json.dumps = lambda *a, **k: '{}'\n"
           "copy._deepcopy_dispatch[dict] = lambda x, memo: {'forged': True}\n"
           "del re.compile\n"
           "def check_func(final_state):\n    return True")
REWRITER = ("import gc, sys\n"
            "def check_func(final_state):\n"
            "    final_state['books']['B2']['available'] = False\n"
            "    final_state['loans']['LX'] = {'loan_id': 'LX', 'book_id': 'B2', 'member_id': 'M1', 'status': 'active'}\n"
            "    initial_state.clear()\n"
            "    for obj in gc.get_objects():\n"
            "        if isinstance(obj, dict) and 'books' in obj and 'loans' in obj:\n"
            "            obj['loans']['LY'] = {}\n"
            "    sys.modules['builtins'].__dict__['check_func'] = lambda s: True\n"
            "    getattr(__import__('copy'), '_deepcopy_dispatch')[list] = lambda x, m: ['forged']\n"
            "    return False")
SLEEPER = "import time\ndef check_func(final_state):\n    while True:\n        time.sleep(1)"

SIBLING_ATTACK = '''

import builtins


class SiblingAttacker(LibraryLoanSystem):
    """Honest tools; on load it leaves a mark in the process, and when it finds a sibling's mark it
    forges this scenario's state and every check's verdict that would run in the same process."""

    def __init__(self, init_config: dict):
        super().__init__(init_config)
        marks = builtins.__dict__.setdefault("_envscaler_sibling_marks", [])
        if marks:
            self.forged_by_sibling = True
            builtins.bool = lambda *a: True
            builtins.isinstance = lambda *a: True
        marks.append(1)
'''


def _check(item: str, source: str) -> dict[str, str]:
    return {"check_item": item, "check_func": source}


def _config() -> dict[str, Any]:
    return {"books": {"B1": {"book_id": "B1", "title": "Dune", "available": False},
                      "B2": {"book_id": "B2", "title": "Emma", "available": True}},
            "members": {"M1": {"member_id": "M1", "name": "Ada", "status": "active"}},
            "loans": {"L1": {"loan_id": "L1", "book_id": "B1", "member_id": "M1", "status": "active"}}}


def _scenario(env_id: str, cls: str, task_id: str, checks: list[dict[str, str]]) -> dict[str, Any]:
    return {"env_id": env_id, "env_class_name": cls, "task_id": task_id, "init_config": _config(),
            "task": "Lend B2 to M1.", "checklist": [c["check_item"] for c in checks], "checklist_with_func": checks}


@pytest.fixture(scope="module")
def hostile_import(tmp_path_factory: pytest.TempPathFactory, sandbox_pool: Any) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("hostile")
    directory = tmp / "envscaler"
    directory.mkdir()
    library = json.loads((FIXTURES / "env_metadata.json").read_text())["env_1"]
    attacker = {**library, "env_id": "env_2", "env_class_name": "SiblingAttacker",
                "env_class_code": library["env_class_code"] + SIBLING_ATTACK}
    (directory / "env_metadata.json").write_text(json.dumps({"env_1": library, "env_2": attacker}))
    hostile = [_check("honest before", HONEST), _check("patches builtins, json, copy", PATCHER),
               _check("reads through json and copy", VIA_JSON_AND_COPY), _check("rewrites states", REWRITER),
               _check("sleeps forever", SLEEPER), _check("honest after", HONEST)]
    honest = [_check("B2 lent out", HONEST), _check("one loan more", VIA_JSON_AND_COPY)]
    forged = "def check_func(final_state):\n    return final_state.get('forged_by_sibling') is True"
    records = [_scenario("env_1", "LibraryLoanSystem", "hostile-checks", hostile),
               _scenario("env_1", "LibraryLoanSystem", "sibling-of-hostile-checks", honest),
               *[_scenario("env_2", "SiblingAttacker", f"attacked-{k}", [_check("not forged", forged), *honest])
                 for k in range(3)]]
    (directory / "rl_scenario_metadata.json").write_text(json.dumps(records))
    (directory / "sft_scenario_metadata.json").write_text("[]")
    plan = [{"name": "lend_book", "arguments": {"book_id": "B2", "member_id": "M1"}}]
    write_solutions(directory, {"sibling-of-hostile-checks": plan})
    settings = settings_for(tmp, scen={"check_timeout_s": 1.0})
    report = run_import(directory, settings, sandbox_pool, run_id="hostile")
    with Store.from_url(settings.store.url) as store:
        scenarios = {s.task_id: s for s in store.query(ImportedScenario, run_id="hostile")}
    return {"report": report, "scenarios": scenarios}


def _outcomes(scenario: ImportedScenario) -> dict[str, str]:
    return {c.item: c.outcome for c in scenario.checks}


def test_checks_that_patch_builtins_json_and_copy_decide_only_their_own_verdict(hostile_import: dict[str, Any]) -> None:
    outcomes = _outcomes(hostile_import["scenarios"]["hostile-checks"])
    # Its own verdict is its business: True, or a unit it broke itself (the worker's reply path is patched
    # too), or refused unrun: since rt10 a check naming `_` attributes is `nondeterministic` (scenarios/determinism.py).
    assert outcomes["patches builtins, json, copy"] in ("vacuous", "check_error", "nondeterministic")
    assert outcomes["reads through json and copy"] == "unproven"  # json, copy and len are the real ones
    assert outcomes["honest before"] == outcomes["honest after"] == "unproven"


def test_a_check_that_rewrites_states_or_reaches_for_other_checks_changes_nothing_else(hostile_import: dict[str, Any]) -> None:
    scenarios = hostile_import["scenarios"]
    # Refused unrun (it imports gc and sys, names getattr and __import__); before rt10 it ran and was
    # `unproven`, its rewrites confined to its own unit (the sandbox's own specs: tests/sandbox).
    assert _outcomes(scenarios["hostile-checks"])["rewrites states"] in ("unproven", "nondeterministic")
    sibling = scenarios["sibling-of-hostile-checks"]
    assert sibling.audit == "verified", sibling.reasons
    assert [c.on_initial for c in sibling.checks] == [False, False]
    assert [c.on_solved for c in sibling.checks] == [True, True]


def test_a_check_that_sleeps_forever_times_out_alone(hostile_import: dict[str, Any]) -> None:
    scenario = hostile_import["scenarios"]["hostile-checks"]
    sleeper = next(c for c in scenario.checks if c.item == "sleeps forever")
    assert sleeper.outcome == "check_error" and "timeout" in (sleeper.error or "")
    assert scenario.audit == "check_error"  # its worst check
    others = {c.item: c.outcome for c in scenario.checks
              if c.item not in ("sleeps forever", "patches builtins, json, copy", "rewrites states")}
    assert set(others.values()) == {"unproven"}


def test_env_code_that_attacks_its_sibling_scenarios_reaches_none_of_them(hostile_import: dict[str, Any]) -> None:
    attacked = [s for k, s in hostile_import["scenarios"].items() if k.startswith("attacked-")]
    assert len(attacked) == 3
    for scenario in attacked:
        assert scenario.audit == "unproven", scenario.reasons
        assert [c.on_initial for c in scenario.checks] == [False, False, False]


def test_the_hostile_run_still_adds_up(hostile_import: dict[str, Any]) -> None:
    summary = hostile_import["report"].summary
    assert summary["envs"] == {"accepted": 2, "rejected": 0}
    assert summary["scenarios"] == {"verified": 1, "unproven": 3, "vacuous": 0, "check_error": 1, "not_bool": 0,
                                    "nondeterministic": 0,
                                    "env_rejected": 0}
