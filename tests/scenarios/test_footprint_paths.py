"""Spec: how the footprint names a change (`scenarios/footprint.py`), lists above all (outside check rt10-A,
F2). A list element is named by content, never by index: a record by its id-like key (`[id="E2"]`),
anything else by its canonical JSON (`["a"]`), so a removal or an insertion claims the element it
removes or inserts and none of those it shifts, and a name is the same in the footprint and in a
trajectory whatever the element's position. Equal elements are counted apart (`["a"]#2`: the second copy),
and an episode's log names an element by what it was at the start, whatever calls made of it since
(outside check rt11-A, F2, F3)."""

from __future__ import annotations

from envscaler_core.scenarios.footprint import ChangeLog, changed_paths


def test_a_removed_record_is_named_by_its_id_not_by_the_indices_it_shifts() -> None:
    before = {"q": [{"id": "E1", "o": "a"}, {"id": "E2", "o": "b"}, {"id": "E3", "o": "c"}]}
    assert changed_paths(before, {"q": before["q"][1:]}) == ['/q/[id="E1"]']


def test_a_changed_field_of_a_record_in_a_list_is_named_under_its_id() -> None:
    before = {"q": [{"id": 1, "o": "a"}, {"id": 2, "o": "b"}]}
    after = {"q": [{"id": 2, "o": "z"}]}
    assert changed_paths(before, after) == ["/q/[id=1]", "/q/[id=2]/o"]


def test_a_key_ending_in_id_names_records_when_there_is_no_id() -> None:
    before = {"r": [{"reminder_id": "R-1", "on": True}, {"reminder_id": "R-2", "on": True}]}
    after = {"r": [{"reminder_id": "R-1", "on": True}, {"reminder_id": "R-2", "on": False}]}
    assert changed_paths(before, after) == ['/r/[reminder_id="R-2"]/on']


def test_scalars_are_named_by_their_json_and_aligned_as_a_sequence() -> None:
    assert changed_paths({"t": ["a", "b", "c"]}, {"t": ["b", "c", "d"]}) == ['/t/["a"]', '/t/["d"]']
    assert changed_paths({"t": [1, 2]}, {"t": [1, True, 2]}) == ["/t/[true]"]


def test_records_without_an_id_are_named_by_their_content() -> None:
    before = {"l": [{"a": 1}, {"a": 2}]}
    assert changed_paths(before, {"l": [{"a": 2}]}) == ['/l/[{"a":1}]']


def test_a_moved_record_is_a_change_of_that_record_only() -> None:
    before = {"q": [{"id": "E1"}, {"id": "E2"}, {"id": "E3"}]}
    after = {"q": [{"id": "E3"}, {"id": "E1"}, {"id": "E2"}]}
    assert changed_paths(before, after) == ['/q/[id="E3"]']


def test_a_long_element_is_named_by_a_digest_and_slashes_are_escaped() -> None:
    long = "x" * 100
    (path,) = changed_paths({"t": []}, {"t": [long]})
    assert path.startswith("/t/[sha256:") and len(path) < 40
    assert changed_paths({"t": []}, {"t": ["a/b"]}) == ['/t/["a~1b"]']


def test_long_lists_are_compared_as_multisets_and_a_reorder_is_the_list_itself() -> None:
    """A sequence alignment is quadratic at worst; an agent's list is the agent's to make long."""
    before = {"t": list(range(5000))}
    assert changed_paths(before, {"t": list(reversed(range(5000)))}) == ["/t"]
    assert changed_paths(before, {"t": [*reversed(range(1, 5000)), 7000]}) == ["/t/[0]", "/t/[7000]"]


def test_equal_elements_are_counted_apart_and_a_removal_takes_the_last_copy() -> None:
    assert changed_paths({"t": ["a", "a", "b"]}, {"t": ["a", "b"]}) == ['/t/["a"]#2']
    assert changed_paths({"t": ["a", "a", "b"]}, {"t": ["b"]}) == ['/t/["a"]', '/t/["a"]#2']
    assert changed_paths({"t": ["a"]}, {"t": ["a", "a", "a"]}) == ['/t/["a"]#2', '/t/["a"]#3']


def test_a_record_without_an_id_edited_in_place_is_named_by_what_it_was() -> None:
    before = {"l": [{"d": 1, "t": False}, {"d": 2, "t": False}]}
    after = {"l": [{"d": 3, "t": True}, {"d": 2, "t": False}]}
    assert changed_paths(before, after) == ['/l/[{"d":1,"t":false}]/d', '/l/[{"d":1,"t":false}]/t']


def test_a_log_keeps_the_start_name_of_an_element_through_its_calls() -> None:
    log = ChangeLog({"l": [{"d": 1, "t": False}]})
    log.saw({"l": [{"d": 1, "t": True}]})
    log.saw({"l": [{"d": 3, "t": True}]})
    assert log.paths == ['/l/[{"d":1,"t":false}]/d', '/l/[{"d":1,"t":false}]/t']


def test_a_copy_added_then_removed_is_still_a_changed_path() -> None:
    log = ChangeLog({"t": ["a"]})
    log.saw({"t": ["a", "a"]})
    log.saw({"t": ["a"]})
    assert log.paths == ['/t/["a"]#2']
