"""Spec: probes reach tools whose arguments the state can satisfy only as a whole (outside check F2, F3).

* An array parameter of any element type (`Tuple[str, str]`, `list[int]`, `list[str]`) is offered the
  arrays the state holds that fit its items, those under a field named like it or inside what the tool
  itself touches first; before, it only ever got `[]` (or a one-id list), so `set_milestone(name,
  window: Tuple[str, str])` never succeeded although the state holds a fitting window.
* Parameters that must come from one entry of the state (the components of one tuple key, the key and
  fields of one record, however many) are tried together, with the other parameters at existing values;
  before, candidates were chosen per parameter, so a free seat that exists was only ever tried with a
  screening that does not.

Each is shown on the plan and on a real programmatic validation in the sandbox."""

from __future__ import annotations

from typing import Any

from tests.validation.probe_helpers import plans_by_tool as _plan, validate_programmatically as _validate

TRACKER = '''from typing import Dict, List, Tuple


class Tracker:
    def __init__(self, init_config: dict):
        self.milestones: Dict[str, Tuple[str, str]] = {}
        self.sprints: Dict[str, dict] = {}

    def set_milestone(self, name: str, window: Tuple[str, str]) -> dict:
        """Create or move a milestone's (start, end) window."""
        if len(window) != 2 or window[0] > window[1]:
            return {"success": False, "error": "bad window"}
        self.milestones[name] = (window[0], window[1])
        return {"success": True, "message": "milestone set"}

    def set_points(self, sprint_id: str, points: List[int]) -> dict:
        """Set a sprint's story points (one number per story, at least one)."""
        sprint = self.sprints.get(sprint_id)
        if sprint is None:
            return {"success": False, "error": "no such sprint"}
        if not points or any(p < 1 for p in points):
            return {"success": False, "error": "give positive points"}
        sprint["points"] = list(points)
        return {"success": True, "message": "points set"}
'''
TRACKER_STATE = {"milestones": {"alpha": ["2025-01-01", "2025-02-01"]},
                 "sprints": {"SP1": {"goal": "ship", "points": [3, 5]}}}

THEATRE = '''from typing import Dict, Optional, Tuple


class Theatre:
    def __init__(self, init_config: dict):
        self.shows: Dict[str, dict] = {}
        self.seats: Dict[Tuple[str, int, int], Optional[str]] = {}

    def book(self, guest: str, hall: str, row: int, seat: int, show_id: str) -> dict:
        """Book a free seat (hall, row, seat) for a guest at a show; row 1 is for members."""
        if show_id not in self.shows:
            return {"success": False, "error": "no such show"}
        key = (hall, row, seat)
        if key not in self.seats:
            return {"success": False, "error": "no such seat"}
        if self.seats[key] is not None:
            return {"success": False, "error": "taken"}
        if row == 1:
            return {"success": False, "error": "members only"}
        self.seats[key] = guest
        return {"success": True, "message": "booked"}
'''
THEATRE_STATE = {"shows": {"SH1": {"title": "Hamlet"}},
                 "seats": {"__type__": "dict", "items": [
                     [{"__type__": "key", "value": {"__type__": "tuple", "items": ["A", 1, 1]}}, None],
                     [{"__type__": "key", "value": {"__type__": "tuple", "items": ["A", 1, 2]}}, "zoe"],
                     [{"__type__": "key", "value": {"__type__": "tuple", "items": ["B", 2, 1]}}, "max"],
                     [{"__type__": "key", "value": {"__type__": "tuple", "items": ["B", 2, 2]}}, None]]}}


def test_a_tuple_parameter_is_offered_the_windows_the_state_holds() -> None:
    window = _plan(TRACKER, "Tracker", TRACKER_STATE)["set_milestone"].options["window"].values
    assert window[0] == ["2025-01-01", "2025-02-01"] and [] in window


def test_an_integer_list_parameter_is_offered_the_integer_lists_the_state_holds() -> None:
    points = _plan(TRACKER, "Tracker", TRACKER_STATE)["set_points"].options["points"].values
    assert [3, 5] in points and ["2025-01-01", "2025-02-01"] not in points


def test_tools_with_array_parameters_succeed_in_validation(sandbox_pool: Any) -> None:
    outcome = _validate(TRACKER, "Tracker", TRACKER_STATE, sandbox_pool)
    assert outcome.report.accepted, outcome.report
    assert {"set_milestone", "set_points"} <= {r.tool for r in outcome.rounds
                                               if isinstance(r.observation, dict) and r.observation.get("success")}


def test_the_components_of_one_existing_tuple_key_are_tried_together_with_an_existing_show() -> None:
    seats = {("A", 1, 1), ("A", 1, 2), ("B", 2, 1), ("B", 2, 2)}
    tried = [p.args for p in _plan(THEATRE, "Theatre", THEATRE_STATE)["book"].positives()]
    assert {(a["hall"], a["row"], a["seat"]) for a in tried[:4]} == seats, tried  # each existing seat first
    assert all(a["show_id"] == "SH1" for a in tried[:4])  # with the show that exists, not a fresh id


def test_a_tool_whose_arguments_must_match_one_key_succeeds_in_validation(sandbox_pool: Any) -> None:
    outcome = _validate(THEATRE, "Theatre", THEATRE_STATE, sandbox_pool)
    assert outcome.report.accepted, outcome.report
    assert any(r.tool == "book" and r.observation == {"success": True, "message": "booked"} for r in outcome.rounds)
