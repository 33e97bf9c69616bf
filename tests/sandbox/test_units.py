"""The host-side pure pieces: diff shape and schema checking."""

from __future__ import annotations

from sandbox.diff import MAX_CHANGES, state_diff
from sandbox.schema import check_call, index_tools


def test_no_change_is_an_empty_dict() -> None:
    assert state_diff({"a": [1, {"b": 2}]}, {"a": [1, {"b": 2}]}) == {}


def test_bool_and_int_differ_and_keys_are_escaped() -> None:
    diff = state_diff({"a/b": 1, "c~": True}, {"a/b": True, "c~": True})
    assert diff == {"changes": [{"op": "replace", "path": "/a~1b", "old": 1, "new": True}]}


def test_list_shrink_removes_from_the_end() -> None:
    diff = state_diff({"l": [1, 2, 3]}, {"l": [1]})
    assert [c["path"] for c in diff["changes"]] == ["/l/2", "/l/1"]


def test_huge_diffs_are_truncated() -> None:
    diff = state_diff({"l": list(range(5000))}, {"l": [x + 1 for x in range(5000)]})
    assert len(diff["changes"]) == MAX_CHANGES and diff["truncated"] is True


def test_schema_subset() -> None:
    index = index_tools([{"type": "function", "function": {"name": "f", "parameters": {
        "type": "object", "required": ["n"],
        "properties": {"n": {"type": "number"}, "o": {"type": "object", "properties": {"k": {"type": "integer"}},
                                                        "additionalProperties": False},
                       "u": {"type": ["string", "null"]}}}}}])
    assert check_call("f", {"n": 1}, index) is None
    assert check_call("f", {"n": 1.5, "u": None}, index) is None
    assert "expected number" in check_call("f", {"n": "1"}, index)
    assert "f.o.k: expected integer" in check_call("f", {"n": 1, "o": {"k": 1.5}}, index)
    assert "unexpected argument 'z'" in check_call("f", {"n": 1, "o": {"z": 1}}, index)
    assert "must be a JSON object" in check_call("f", [1], index)
