"""Spec: validation prompts show a state as the test state plus JSON-Pointer changes; applying the
changes to the test state gives back exactly the state the sandbox observed, for every JSON shape."""

from __future__ import annotations

from typing import Any

import pytest

from envscaler_core.models.changes import apply_changes, state_changes

CASES: list[tuple[str, Any, Any]] = [
    ("equal", {"a": {"b": [1, 2]}}, {"a": {"b": [1, 2]}}),
    ("nested replace", {"rooms": {"R1": {"status": "free"}}}, {"rooms": {"R1": {"status": "taken"}}}),
    ("added record", {"rooms": {}}, {"rooms": {"R/2~x": {"n": 1}}}),
    ("removed key", {"a": 1, "b": 2}, {"a": 1}),
    ("list grows", {"log": [1]}, {"log": [1, 2, 3]}),
    ("list shrinks", {"log": [1, 2, 3, 4]}, {"log": [1]}),
    ("bool is not int", {"flag": 1}, {"flag": True}),
    ("type change", {"x": {"y": 1}}, {"x": [1]}),
    ("null and unicode", {"name": "Zoë"}, {"name": None, "note": "ü/~"}),
    ("whole document", [1, 2], {"k": "v"}),
]


@pytest.mark.parametrize(("initial", "current"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_changes_applied_to_the_initial_state_give_the_current_state(initial: Any, current: Any) -> None:
    changes = state_changes(initial, current)
    result = apply_changes(initial, changes)
    assert result == current and type(result) is type(current)
    assert repr(result) == repr(current)  # True stays True, 1 stays 1
    assert (changes == []) == (initial == current and repr(initial) == repr(current))


def test_a_change_only_names_what_differs() -> None:
    initial = {"rooms": {f"R{i}": {"status": "free", "floor": i} for i in range(50)}}
    current = {"rooms": {**initial["rooms"], "R7": {"status": "taken", "floor": 7}}}
    assert state_changes(initial, current) == [{"op": "replace", "path": "/rooms/R7/status", "value": "taken"}]


def test_applying_does_not_modify_the_initial_state() -> None:
    initial = {"a": {"b": 1}}
    apply_changes(initial, [{"op": "replace", "path": "/a/b", "value": 2}])
    assert initial == {"a": {"b": 1}}


def test_a_change_whose_path_does_not_resolve_is_named() -> None:
    with pytest.raises(ValueError, match="/missing/x"):
        apply_changes({"a": 1}, [{"op": "replace", "path": "/missing/x", "value": 2}])


@pytest.mark.parametrize(("old", "new"), [(1, True), (2, 2.0), (0.0, -0.0)], ids=["1->true", "2->2.0", "0.0->-0.0"])
def test_the_judge_is_shown_a_change_python_calls_equal(old: Any, new: Any) -> None:
    assert state_changes({"copies": old}, {"copies": new}) == [{"op": "replace", "path": "/copies", "value": new}]
