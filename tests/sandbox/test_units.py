"""The host-side pure pieces: diff shape and schema checking."""

from __future__ import annotations

from sandbox.diff import MAX_CHANGES, state_diff
from sandbox.schema import check_call, index_tools


def test_no_change_is_an_empty_dict() -> None:
    assert state_diff({"a": [1, {"b": 2}]}, {"a": [1, {"b": 2}]}) == {}


def test_bool_and_int_differ_and_keys_are_escaped() -> None:
    diff = state_diff({"a/b": 1, "c~": True}, {"a/b": True, "c~": True})
    assert diff == {"changes": [{"op": "replace", "path": "/a~1b", "old": 1, "new": True}]}


def test_int_and_float_and_the_sign_of_zero_differ_as_in_json() -> None:
    diff = state_diff({"n": 2, "z": [0.0], "same": 1.5}, {"n": 2.0, "z": [-0.0], "same": 1.5})
    assert diff == {"changes": [{"op": "replace", "path": "/n", "old": 2, "new": 2.0},
                                {"op": "replace", "path": "/z/0", "old": 0.0, "new": -0.0}]}
    assert repr(diff["changes"][1]["new"]) == "-0.0"


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


# ---- the wire's JSON rules (sandbox/jail_json.py) ------------------------------------------------------
import json  # noqa: E402
import random  # noqa: E402

import pytest  # noqa: E402

from sandbox.diff import MAX_CHANGES as CAP  # noqa: E402
from sandbox.jail_json import JSONLimitError, dumps, loads, too_deep  # noqa: E402


def _depth(value) -> int:
    if isinstance(value, list):
        return 1 + max((_depth(v) for v in value), default=0)
    if isinstance(value, dict):
        return 1 + max((_depth(v) for v in value.values()), default=0)
    return 0


def _random_doc(rng: random.Random, depth: int = 0, floor: int = 0):
    """Nested to at least `floor` levels (when it branches at all), mostly as chains of small width."""
    r = rng.random()
    if depth > floor + 10 or (depth >= floor and r < 0.3):  # strings full of the characters a naive scan would miscount
        return rng.choice(['"[', ']"', '\\"[', '\\\\', '\\', '\\\\"', "{", "}", '"', "x\n[", 1, None, 2.5])
    width = rng.choice((0, 1, 1, 1, 2))  # mostly chains: deep documents without exponential size
    if r < 0.65:
        return [_random_doc(rng, depth + 1, floor) for _ in range(width)]
    return {rng.choice(["[", '"', "k", "\\", '\\"', "{"]): _random_doc(rng, depth + 1, floor) for _ in range(width)}


def test_the_depth_prescan_agrees_with_the_real_nesting_on_tricky_documents() -> None:
    rng = random.Random(10)
    for _ in range(2000):
        doc = _random_doc(rng, floor=rng.choice((0, 5, 60, 70)))
        raw = json.dumps(doc, ensure_ascii=rng.random() < 0.5).encode()
        depth = _depth(doc)
        assert too_deep(raw, depth) is False and (depth == 0 or too_deep(raw, depth - 1) is True), raw[:200]


@pytest.mark.parametrize("raw, needle", [
    (b"[" * 5000 + b"]" * 5000, "nesting deeper than 64"),
    (b"[0," * 3000 + b"0" + b"]" * 3000, "nesting deeper than 64"),
    (b'{"a": NaN}', "NaN is not JSON"),
    (b'{"a": Infinity}', "Infinity is not JSON"),
    (b'{"a": -1e400}', "overflows to infinity"),
    (b'{"a": [0.5, 12E+999]}', "overflows to infinity"),
    (b'{"a": -9223372036854775809}', "outside the 64-bit range"),
    (b'{"a": "\\ud800"}', "lone surrogate"),
    (b'{"a": "\\udc00\\ud800"}', "lone surrogate"),
    (b'{"a": "\xed\xa0\x80"}', "not valid UTF-8"),
    (b'{"a": "\xc0\xaf"}', "not valid UTF-8"),
    (b'{"a": 9223372036854775808}', "outside the 64-bit range"),
    (b'{"a": ' + b"1" * 4000 + b"}", "integer of 4000 digits"),
    (b'{"a": 1', "not JSON"),
])
def test_untrusted_json_breaking_a_wire_rule_is_refused_by_name(raw: bytes, needle: str) -> None:
    with pytest.raises(JSONLimitError, match=needle):
        loads(raw, 64)


def test_legitimate_json_passes_unchanged() -> None:
    doc = {"s": "😀 \\ \" [ {", "n": -9223372036854775808, "f": 1e308, "l": [[[]]], "z": None}
    assert loads(json.dumps(doc).encode(), 64) == doc  # the emoji travels as an escaped surrogate pair
    assert loads(json.dumps(doc, ensure_ascii=False).encode(), 64) == doc
    plain = {"n": [-999999999999999999, 0, 7], "f": [0.5, -12.25], "s": "e5 NaN"}  # the hook-free path
    assert loads(json.dumps(plain).encode(), 64) == plain


@pytest.mark.parametrize("value, needle", [
    ({"a": float("nan")}, "Out of range float"),
    ({"a": "\udcff"}, "surrogates not allowed"),
    ({"a": 10 ** 19}, "outside the 64-bit range"),
    ([[[[[1]]]]], "nesting deeper than 4"),
])
def test_the_worker_refuses_to_send_what_the_host_would_refuse(value, needle: str) -> None:
    with pytest.raises(ValueError, match=needle):
        dumps(value, 4)


# ---- the diff stops at its cap inside every loop --------------------------------------------------------
class CountingDict(dict):
    """A dict that counts how many of its items a walk looks at."""

    seen = 0

    def items(self):
        for key in self:
            CountingDict.seen += 1
            yield key, self[key]


def test_the_diff_stops_walking_once_the_change_cap_is_reached() -> None:
    old = CountingDict({f"old{i}": i for i in range(200_000)})
    new = CountingDict({f"new{i}": i for i in range(200_000)})
    CountingDict.seen = 0
    diff = state_diff(old, new)
    assert len(diff["changes"]) == CAP and diff["truncated"] is True
    assert CountingDict.seen <= CAP + 1


def test_list_growth_and_shrink_respect_the_cap() -> None:
    assert len(state_diff({"l": []}, {"l": list(range(100_000))})["changes"]) == CAP
    assert len(state_diff({"l": list(range(100_000))}, {"l": []})["changes"]) == CAP


def test_a_bool_hidden_in_an_equal_looking_subtree_is_still_a_replace() -> None:
    assert state_diff({"a": {"b": [1, {"c": True}]}}, {"a": {"b": [1, {"c": 1}]}}) == {
        "changes": [{"op": "replace", "path": "/a/b/1/c", "old": True, "new": 1}]}


# ---- the seccomp program ---------------------------------------------------------------------------------
def test_the_seccomp_program_assembles_within_bpf_limits() -> None:
    from sandbox.seccomp_filter import seccomp_program

    code = seccomp_program(2)
    assert len(code) % 8 == 0 and len(code) // 8 < 4096
