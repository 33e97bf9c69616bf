"""Spec: the batched harness runs EnvScaler's loader and check contract inside the real sandbox,
item by item, and one hostile item never costs its neighbours their verdict."""

from __future__ import annotations

import datetime
import decimal
import json
from collections.abc import Iterator
from typing import Any

import pytest

from envscaler_core.config import SandboxSettings
from envscaler_core.interop.batch import HarnessRunner
from envscaler_core.interop.harness import UnsupportedValue, restore_markers, save_markers

ENV = '''
from typing import Dict, TypedDict


class RoomInfo(TypedDict):
    room_id: str
    booked: bool


class Hotel:
    def __init__(self, init_config: dict):
        self.rooms: Dict[str, RoomInfo] = {}
        self.guests: Dict[str, str] = {}
        self._audit_log = []
        self.init_config = init_config

    def book(self, room_id: str) -> dict:
        self.rooms[room_id]["booked"] = True
        return {"success": True, "message": "booked"}
'''

NO_ARG = '''
class Counter:
    def __init__(self):
        self.count = 0
'''

PICKY = '''
class Picky:
    def __init__(self, init_config):
        raise TypeError("I do not like this config")
'''

CHECK_TRUE = "def check_func(final_state):\n    return True"
CHECK_FALSE = "def check_func(final_state):\n    return False"


@pytest.fixture
def runner(sandbox_pool: Any) -> Iterator[HarnessRunner]:
    with HarnessRunner(sandbox_pool, 5.0) as r:
        yield r


def _state(result: dict[str, Any]) -> dict[str, Any]:
    return json.loads(result["state"])


def test_loading_constructs_then_sets_every_top_level_key(runner: HarnessRunner) -> None:
    config = {"rooms": {"R1": {"room_id": "R1", "booked": False}}, "extra": 7}
    (result,) = runner.run("load_states", [{"class_name": "Hotel", "config": config}], {"code": ENV})
    state = _state(result)
    assert state["rooms"] == config["rooms"] and state["extra"] == 7 and state["guests"] == {}
    assert state["_audit_log"] == []  # EnvScaler's state keeps _private attributes (only dunders go)
    assert state["init_config"] == config


def test_a_class_without_a_config_argument_is_built_with_no_arguments(runner: HarnessRunner) -> None:
    results = runner.run("load_states", [{"class_name": "Counter", "config": {"count": 3}},
                                         {"class_name": "Counter", "config": None}], {"code": NO_ARG})
    assert [_state(r) for r in results] == [{"count": 3}, {"count": 0}]


def test_a_type_error_inside_the_constructor_also_falls_back_to_no_arguments(runner: HarnessRunner) -> None:
    (result,) = runner.run("load_states", [{"class_name": "Picky", "config": {"a": 1}}], {"code": PICKY})
    assert "TypeError" in result["error"]  # cls() has no init_config argument either: loading fails


def test_a_class_name_missing_from_the_code_is_an_error_for_that_item_only(runner: HarnessRunner) -> None:
    results = runner.run("load_states", [{"class_name": "Nope", "config": {}}, {"class_name": "Hotel", "config": {}}],
                         {"code": ENV})
    assert "Class 'Nope' not found" in results[0]["error"] and "state" in results[1]


def test_checks_see_initial_state_and_only_a_real_bool_counts(runner: HarnessRunner) -> None:
    state = json.dumps({"n": 1})
    checks = [
        "def check_func(final_state):\n    return final_state['n'] == initial_state['n']",
        "def check_func(final_state):\n    return 1",
        "def check_func(final_state):\n    return None",
        "check_func = True",
        "def check(final_state):\n    return True",
        "def check_func(final_state):\n    return final_state['missing']",
        "",
    ]
    (result,) = runner.run("run_checks", [{"initial": state, "final": state, "checks": checks}], None, "check_timeout_s")
    assert [(r["kind"], r.get("v")) for r in result] == [
        ("ok", True), ("not_bool", None), ("not_bool", None), ("error", None), ("error", None), ("error", None),
        ("error", None)]
    assert result[4]["error"] == "Function 'check_func' not found."


def test_a_check_that_mutates_its_state_or_the_builtins_does_not_change_the_next_verdict(runner: HarnessRunner) -> None:
    state = json.dumps({"items": [1, 2]})
    vandal = ("def check_func(final_state):\n    final_state['items'].clear()\n    initial_state.clear()\n"
              "    __builtins__['len'] = lambda x: 99\n    return False")
    honest = "def check_func(final_state):\n    return len(final_state['items']) == 2 and len(initial_state['items']) == 2"
    (result,) = runner.run("run_checks", [{"initial": state, "final": state, "checks": [vandal, honest]}], None,
                           "check_timeout_s")
    assert result[1] == {"v": True, "kind": "ok"}


def test_a_looping_check_times_out_alone(runner: HarnessRunner) -> None:
    state = json.dumps({})
    loop = "def check_func(final_state):\n    while True:\n        pass"
    (result,) = runner.run("run_checks", [{"initial": state, "final": state, "checks": [loop, CHECK_TRUE]}], None,
                           "check_timeout_s")
    assert "timed out" in result[0]["error"] and result[1]["v"] is True


def test_a_check_that_kills_its_process_is_isolated_and_its_neighbours_still_judged(runner: HarnessRunner) -> None:
    state = json.dumps({})
    killer = "import os\ndef check_func(final_state):\n    os._exit(3)"
    items = [{"initial": state, "final": state, "checks": [CHECK_TRUE]},
             {"initial": state, "final": state, "checks": [killer]},
             {"initial": state, "final": state, "checks": [CHECK_FALSE]}]
    results = runner.run("run_checks", items, None, "check_timeout_s")
    assert results[0][0]["v"] is True and results[2][0]["v"] is False
    assert results[1]["hard"] is True and "crash" in results[1]["error"]


@pytest.mark.slow
def test_a_check_that_swallows_its_timer_is_killed_by_the_sandbox_and_found_by_bisection() -> None:
    from sandbox import SandboxPool

    pool = SandboxPool(SandboxSettings(call_timeout_s=1.0, workers=1))
    stubborn = ("def check_func(final_state):\n    while True:\n        try:\n            while True:\n"
                "                pass\n        except BaseException:\n            pass")
    state = json.dumps({})
    items = [{"initial": state, "final": state, "checks": [CHECK_TRUE]} for _ in range(4)]
    items[2] = {"initial": state, "final": state, "checks": [stubborn]}
    try:
        with HarnessRunner(pool, 1.0, item_timeout_s=0.2) as r:
            results = r.run("run_checks", items, None, "check_timeout_s")
    finally:
        pool.close()
    assert [res[0]["v"] for i, res in enumerate(results) if i != 2] == [True, True, True]
    assert results[2]["hard"] is True and "timeout" in results[2]["error"]


def test_replay_runs_calls_as_envscaler_steps_do(runner: HarnessRunner) -> None:
    config = {"rooms": {"R1": {"room_id": "R1", "booked": False}}}
    calls = [["book", {"room": "R1"}], ["no_such_method", {}], ["book", {"room_id": "R1"}]]
    (result,) = runner.run("replay", [{"class_name": "Hotel", "config": config, "calls": calls}], {"code": ENV})
    assert [c["status"] for c in result["calls"]] == ["raised", "invalid", "ok"]
    assert _state(result)["rooms"]["R1"]["booked"] is True


def test_markers_restore_to_python_types_and_save_back_losslessly() -> None:
    raw = {"s": {"__type__": "set", "items": [2, 1]}, "t": {"__type__": "tuple", "items": [1, "a"]},
           "d": {"__type__": "datetime", "value": "2024-03-02T10:15:00"},
           "m": {"__type__": "decimal", "value": "1.50"},
           "k": {"__type__": "dict", "items": [[{"__type__": "key", "value": {"__type__": "tuple", "items": [1, 2]}}, "x"]]},
           "u": {"__type__": "mystery", "value": 1}}
    value = restore_markers(raw)
    assert value["s"] == {1, 2} and value["t"] == (1, "a") and value["d"] == datetime.datetime(2024, 3, 2, 10, 15)
    assert value["m"] == decimal.Decimal("1.50") and value["k"] == {(1, 2): "x"}
    assert value["u"] == {"__type__": "mystery", "value": 1}
    assert restore_markers(save_markers({**value, 1: "int key", "z": {"__type__": "real key"}})) == {
        **value, 1: "int key", "z": {"__type__": "real key"}}


def test_a_value_no_marker_can_carry_is_refused() -> None:
    with pytest.raises(UnsupportedValue):
        save_markers({"x": object()})


def test_a_check_that_reaches_the_driver_runs_alone_and_cannot_forge_its_neighbours(runner: HarnessRunner) -> None:
    state = json.dumps({})
    forger = ("import gc\ndef check_func(final_state):\n    for o in gc.get_objects():\n"
              "        if isinstance(o, type) and o.__name__ == 'EnvScalerInteropHarness':\n"
              "            o._check_one = lambda *a, **k: {'v': True, 'kind': 'ok'}\n    return False")
    honest = "def check_func(final_state):\n    return 1"
    results = runner.run_checks([{"initial": state, "final": state, "checks": [forger]},
                                 {"initial": state, "final": state, "checks": [honest]}])
    assert results[0][0]["v"] is False and results[1][0]["kind"] == "not_bool"


def test_a_state_too_large_for_a_reply_is_that_items_error(runner: HarnessRunner) -> None:
    big = ENV.replace("self._audit_log = []", "self._audit_log = ['x' * 1000] * 2000")
    results = runner.run("load_states", [{"class_name": "Hotel", "config": {}}, {"class_name": "Nope", "config": {}}],
                         {"code": big})
    assert "over the 600000 a reply may carry" in results[0]["error"] and "not found" in results[1]["error"]


def test_env_code_that_kills_its_process_on_import_fails_every_item_quickly(runner: HarnessRunner) -> None:
    items = [{"class_name": "Hotel", "config": {}} for _ in range(20)]
    results = runner.run("load_states", items, {"code": "import os\nos._exit(0)\n" + ENV})
    assert all("error" in r for r in results)
    assert sum(1 for r in results if r["error"].startswith("not run")) >= 15, "the breaker stops after three kills"


@pytest.mark.parametrize(("source", "alone"), [
    ("def check_func(s):\n    return s['a'] == 1", False),
    ("import re\nfrom datetime import datetime\ndef check_func(s):\n    return bool(re.match('a', 'a'))", False),
    ("import gc\ndef check_func(s):\n    return False", True),
    ("def check_func(s):\n    return ().__class__ is tuple", True),
    ("import json\ndef check_func(s):\n    json.loads = None\n    return False", True),
    ("import numpy as np\ndef check_func(s):\n    return False", True),
    ("def check_func(s):\n    return getattr(s, 'x', None) is None", True),
])
def test_the_screen_sends_only_checks_with_escape_hatches_to_their_own_process(source: str, alone: bool) -> None:
    from envscaler_core.interop.screen import needs_isolation

    assert needs_isolation(source) is alone
