"""Spec: EnvScaler's loader and check contract on the real sandbox's primitives (one episode per load or
replay, one unit per check), with its `__type__` markers restored inside the unit."""

from __future__ import annotations

import datetime
import decimal
from typing import Any

import pytest

from envscaler_core.interop.jail_side import UnsupportedValue, restore_markers, save_markers
from envscaler_core.interop.sandboxed import MAX_KILLS, Breaker, env_code, load_state, raw_result, replay, run_checks
from envscaler_core.models.scenario import ToolCall

ENV = '''
from typing import Dict, TypedDict


class RoomInfo(TypedDict):
    room_id: str
    booked: bool


class Hotel:
    def __init__(self, init_config: dict):
        self.rooms: Dict[str, RoomInfo] = {}
        self.tags = set()
        self._audit_log = []
        self.init_config = init_config

    def book(self, room_id: str) -> dict:
        self.rooms[room_id]["booked"] = True
        self.tags.add("booked")
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

OLD_STYLE = '''
class Base(object):
    def __init__(self):
        self.created = True


class Shop(Base):
    opened = 0

    def __init__(self, init_config=None):
        super(Shop, self).__init__()
        Shop.opened += 1
        self.items = {}

    def add(self, name: str) -> dict:
        self.items[name] = Shop.opened
        return {"success": True}
'''

MARKED = {"rooms": {"R1": {"room_id": "R1", "booked": False}},
          "tags": {"__type__": "set", "items": ["vip", "late"]},
          "since": {"__type__": "datetime", "value": "2024-03-02 10:15:00"},
          "pair": {"__type__": "tuple", "items": [1, "a"]}}


def _fn(body: str) -> str:
    return "def check_func(final_state):\n    return " + body


def _breaker() -> Breaker:
    return Breaker(2.0)


def test_loading_constructs_then_sets_every_top_level_key(sandbox_pool: Any) -> None:
    config = {"rooms": {"R1": {"room_id": "R1", "booked": False}}, "extra": 7}
    state = load_state(sandbox_pool, ENV, "Hotel", config, _breaker()).state
    assert state is not None
    assert state["rooms"] == config["rooms"] and state["extra"] == 7 and state["tags"] == {"__type__": "set", "items": []}
    assert state["_audit_log"] == []  # EnvScaler's state keeps _private attributes (only dunders go)
    assert state["init_config"] == config


def test_a_class_without_a_config_argument_is_built_with_no_arguments(sandbox_pool: Any) -> None:
    assert load_state(sandbox_pool, NO_ARG, "Counter", {"count": 3}, _breaker()).state == {"count": 3}
    assert load_state(sandbox_pool, NO_ARG, "Counter", None, _breaker()).state == {"count": 0}


def test_a_type_error_inside_the_constructor_also_falls_back_to_no_arguments(sandbox_pool: Any) -> None:
    loaded = load_state(sandbox_pool, PICKY, "Picky", {"a": 1}, _breaker())
    assert loaded.state is None and "TypeError" in (loaded.error or "")  # cls() has no argument either


def test_a_class_name_missing_from_the_code_is_that_scenarios_error(sandbox_pool: Any) -> None:
    loaded = load_state(sandbox_pool, ENV, "Nope", {}, _breaker())
    assert loaded.state is None and "Nope" in (loaded.error or "")


def test_markers_reach_the_class_and_the_checks_as_python_types(sandbox_pool: Any) -> None:
    breaker = _breaker()
    initial = load_state(sandbox_pool, ENV, "Hotel", MARKED, breaker).state
    assert initial is not None and initial["tags"] == {"__type__": "set", "items": ["late", "vip"]}
    final = replay(sandbox_pool, ENV, "Hotel", MARKED, [ToolCall(tool="book", args={"room_id": "R1"})], breaker)
    assert final.statuses == ["ok"] and final.state is not None
    checks = [_fn("final_state['tags'] == {'vip', 'late', 'booked'} and initial_state['tags'] == {'vip', 'late'}"),
              _fn("final_state['since'] == initial_state['since'] and final_state['since'].year == 2024"),
              _fn("final_state['pair'] == (1, 'a') and isinstance(final_state['init_config']['tags'], set)")]
    got = run_checks(sandbox_pool, checks, initial, final.state, breaker)
    assert [o.passed for o in got] == [True, True, True], [o.error for o in got]


def test_classes_naming_themselves_in_super_and_class_attributes_behave_as_written(sandbox_pool: Any) -> None:
    result = replay(sandbox_pool, OLD_STYLE, "Shop", {"items": {"a": 0}}, [ToolCall(tool="add", args={"name": "b"})],
                    _breaker())
    assert result.statuses == ["ok"] and result.state == {"created": True, "items": {"a": 0, "b": 1}}


SELF_AWARE = '''
class Booking:
    next_id = 1

    def __init__(self, init_config: dict):
        self.bookings = {}
        self.by_guest = {b["guest"]: b for b in init_config.get("bookings", {}).values()}

    def book(self, guest: str) -> dict:
        self.__class__.next_id += 1
        bid = "B%03d" % Booking.next_id
        self.bookings[bid] = {"guest": guest, "same_type": type(self) is Booking, "attrs": sorted(vars(self))}
        return {"success": True, "booking_id": bid}

    def rename(self, old: str, new: str) -> dict:
        self.by_guest[old]["guest"] = new
        return {"success": True}
'''


def test_an_imported_class_is_its_own_class_to_its_code(sandbox_pool: Any) -> None:
    """No subclass and no flag between the env and its code: `self.__class__`, `type(self) is Cls` and
    `vars(self)` are what EnvScaler's runtime gives (B002: the counter lands on the class the code
    reads it from), also when the config holds markers."""
    config = {"bookings": {}, "since": {"__type__": "datetime", "value": "2024-01-02T03:04:05"}}
    result = replay(sandbox_pool, SELF_AWARE, "Booking", config, [ToolCall(tool="book", args={"guest": "Ana"})], _breaker())
    assert result.statuses == ["ok"]
    assert result.state["bookings"] == {"B002": {"guest": "Ana", "same_type": True,
                                                  "attrs": ["bookings", "by_guest", "since"]}}


def test_attributes_alias_what_the_constructor_built_from_the_config(sandbox_pool: Any) -> None:
    """One copy of the (restored) config for the constructor and the keys set after it, as in EnvScaler:
    a write through an index made in `__init__` reaches the state."""
    config = {"bookings": {"B1": {"guest": "Ana", "tags": {"__type__": "set", "items": ["vip"]}}}}
    result = replay(sandbox_pool, SELF_AWARE, "Booking", config,
                    [ToolCall(tool="rename", args={"old": "Ana", "new": "Bo"})], _breaker())
    assert result.statuses == ["ok"]
    assert result.state["bookings"]["B1"] == {"guest": "Bo", "tags": {"__type__": "set", "items": ["vip"]}}


TAGGER = '''
import datetime, decimal


class Tagger:
    def __init__(self, init_config: dict):
        self.tags = set()

    def tag(self, name: str) -> dict:
        self.tags.add(name)
        return {"success": True, "data": {"tags": self.tags, "at": datetime.datetime(2024, 1, 2), "fee": decimal.Decimal("1.50")}}
'''


def test_a_tool_result_holding_sets_datetimes_and_decimals_is_an_answer_not_an_error(sandbox_pool: Any) -> None:
    """EnvScaler shows the agent `str()` of the result; our wire is JSON, so the values come as markers
    instead of an `unserializable` call that replays counted as raised (outside interop check, finding 5)."""
    result = replay(sandbox_pool, TAGGER, "Tagger", {}, [ToolCall(tool="tag", args={"name": "new"})], _breaker())
    assert result.statuses == ["ok"], result.errors
    assert result.state == {"tags": {"__type__": "set", "items": ["new"]}}


def test_checks_may_index_builtins_as_in_envscalers_runtime(sandbox_pool: Any) -> None:
    source = "def check_func(final_state):\n    return __builtins__['len'](final_state['items']) == 2\n"
    [outcome] = run_checks(sandbox_pool, [source], {"items": []}, {"items": [1, 2]}, _breaker())
    assert outcome.passed is True, outcome


def test_a_broken_marker_is_that_scenarios_load_error(sandbox_pool: Any) -> None:
    config = {"tags": {"__type__": "set", "items": [["unhashable"]]}}
    loaded = load_state(sandbox_pool, ENV, "Hotel", config, _breaker())
    assert loaded.state is None and "init_config cannot be restored" in (loaded.error or "")


def test_checks_see_initial_state_and_only_a_real_bool_counts(sandbox_pool: Any) -> None:
    state = {"n": 1}
    checks = [_fn("final_state['n'] == initial_state['n']"), _fn("1"), _fn("None"), "check_func = True",
              "def check(final_state):\n    return True", _fn("final_state['missing']"), ""]
    raw = [raw_result(o) for o in run_checks(sandbox_pool, checks, state, state, _breaker())]
    assert [(r["kind"], r.get("v")) for r in raw] == [
        ("ok", True), ("not_bool", None), ("not_bool", None), ("error", None), ("error", None), ("error", None),
        ("error", None)]
    assert raw[4]["error"] == "Function 'check_func' not found."


def test_replay_runs_calls_as_envscaler_steps_do(sandbox_pool: Any) -> None:
    config = {"rooms": {"R1": {"room_id": "R1", "booked": False}}}
    calls = [ToolCall(tool="book", args={"room": "R1"}), ToolCall(tool="no_such_method", args={}),
             ToolCall(tool="book", args={"room_id": "R9"}), ToolCall(tool="book", args={"room_id": "R1"})]
    result = replay(sandbox_pool, ENV, "Hotel", config, calls, _breaker())
    assert result.statuses == ["raised", "invalid", "raised", "ok"]
    assert result.state is not None and result.state["rooms"]["R1"]["booked"] is True


@pytest.mark.slow
def test_an_env_whose_every_load_hangs_costs_a_few_timeouts_not_one_per_scenario(sandbox_pool: Any) -> None:
    breaker = _breaker()
    hanging = ENV.replace("self.init_config = init_config", "while True:\n            pass")
    results = [load_state(sandbox_pool, hanging, "Hotel", {}, breaker) for _ in range(MAX_KILLS + 4)]
    assert all(r.state is None and r.killed for r in results)
    assert sum(1 for r in results if (r.error or "").startswith("not run")) == 4


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


def test_marker_free_values_are_restored_without_a_copy() -> None:
    shared = {"a": [1, 2]}
    assert restore_markers(shared) is shared


def test_a_value_no_marker_can_carry_is_refused() -> None:
    with pytest.raises(UnsupportedValue):
        save_markers({"x": object()})


LOOKER = '''
class Looker:
    def __init__(self, init_config: dict):
        self.tags = []

    def look(self) -> dict:
        return {"success": True, "class": sorted(vars(type(self))), "hooks": [hasattr(self, "__sandbox_state__"),
                hasattr(type(self), "__sandbox_config__")], "globals": sorted(globals())}
'''


def test_the_marker_adapter_leaves_no_trace_on_the_class_or_in_the_modules_globals(sandbox_pool: Any) -> None:
    """Red team sandbox-3 F5: a class that lent books only when `__sandbox_state__` was in `vars(type(self))`
    was verified by the audit and failed in EnvScaler's runtime. What the class can see of itself and of its
    module is now the same with the importer's adapter as without it."""
    marked = {"tags": {"__type__": "set", "items": ["a"]}}
    with sandbox_pool.open_episode(env_code(LOOKER, "Looker"), "Looker", marked) as ep:
        adapted = ep.call("look", {})
        assert ep.state["tags"] == marked["tags"]  # the adapter is at work: the set was restored and written back
    with sandbox_pool.open_episode(LOOKER, "Looker", {}) as ep:
        plain = ep.call("look", {})
    assert adapted.ok and plain.ok, (adapted, plain)
    assert adapted.result == plain.result
    assert adapted.result["hooks"] == [False, False] and "Looker" in adapted.result["globals"]
