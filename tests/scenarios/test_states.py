"""Spec: which query tools probe an initial state (no invented arguments), and what a state must survive."""

from __future__ import annotations

import pytest

from envscaler_core.scenarios import StateRejected, check_state, probe_calls
from tests.scenarios.helpers import STATE, library_env


def test_probes_are_query_tools_with_no_args_or_an_id_found_in_the_state():
    assert probe_calls(library_env(), STATE) == [("list_books", {}), ("get_book", {"book_id": "b1"})]


def test_id_tool_is_not_probed_when_the_state_has_no_such_id():
    assert probe_calls(library_env(), {"books": {}, "loans": []}) == [("list_books", {})]


def test_state_change_tools_are_never_probed():
    env = library_env()
    env.tool_kinds = {**env.tool_kinds, "list_books": "state_change"}
    assert [name for name, _ in probe_calls(env, STATE)] == ["get_book"]


def test_state_that_changes_under_json_round_trip_is_rejected(runtime):
    with pytest.raises(StateRejected, match="round trip"):
        check_state(library_env(), {"books": {1: {"book_id": 1}}, "loans": []}, runtime)


def test_consistent_state_passes_and_returns_the_loaded_state(runtime):
    loaded = check_state(library_env(), STATE, runtime)
    assert loaded["books"] == STATE["books"]
