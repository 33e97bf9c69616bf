"""One rule for JSON the factory stores or sends (`envscaler_core.models.plain_json`): model replies and
imported files are both held to it."""

import json

import pytest

from envscaler_core.models.plain_json import MAX_DEPTH, nesting_depth, plain_json_problem


def test_ordinary_values_have_no_problem() -> None:
    assert plain_json_problem({"a": [1, 2.5, "é", None, {"b": True}]}) is None


def test_depth_counts_containers_not_scalars() -> None:
    assert nesting_depth(3) == 0
    assert nesting_depth({"a": [[1]]}) == 3


@pytest.mark.parametrize("depth, ok", [(MAX_DEPTH, True), (MAX_DEPTH + 1, False)])
def test_values_nested_past_the_limit_are_refused(depth: int, ok: bool) -> None:
    value = json.loads("[" * depth + "]" * depth)
    assert (plain_json_problem(value) is None) is ok


def test_a_depth_far_past_the_recursion_limit_is_reported_not_raised() -> None:
    value: list = []
    for _ in range(50_000):
        value = [value]
    assert plain_json_problem(value) == f"nested more than {MAX_DEPTH} levels deep"


def test_a_lone_surrogate_is_not_unicode() -> None:
    assert "lone surrogate" in plain_json_problem({"k": json.loads('"\\ud800"')})


def test_nan_is_refused_unless_the_reader_takes_it() -> None:
    assert plain_json_problem([float("nan")]) == "holds NaN or Infinity"
    assert plain_json_problem([float("inf")], allow_nan=True) is None


def test_a_python_object_is_not_json() -> None:
    assert plain_json_problem({"when": object()}).startswith("holds a value that is not JSON")
