"""The one reading of a def's parameters, as a call by keywords sees them (envscaler_core/signature.py)."""

from __future__ import annotations

import ast

from envscaler_core.signature import Parameters, parameters


def _def(source: str) -> ast.FunctionDef:
    node = ast.parse(source).body[0]
    assert isinstance(node, ast.FunctionDef)
    return node


def _read(source: str, bound: bool | None = None) -> Parameters:
    return parameters(_def(source), bound=bound)


def test_a_first_parameter_named_self_or_cls_is_the_bound_one() -> None:
    assert [a.arg for a in _read("def f(self, a, b): pass").every] == ["a", "b"]
    assert [a.arg for a in _read("def f(cls, a): pass").every] == ["a"]
    assert [a.arg for a in _read("def f(a, b): pass").every] == ["a", "b"]


def test_a_staticmethod_keeps_its_first_parameter_whatever_its_name() -> None:
    assert [a.arg for a in _read("def f(self, a): pass", bound=False).every] == ["self", "a"]


def test_a_bound_first_parameter_is_dropped_whatever_its_name() -> None:
    assert [a.arg for a in _read("def f(this, a): pass", bound=True).every] == ["a"]


def test_defaults_line_up_with_the_end_of_the_positional_parameters() -> None:
    read = _read("def f(self, a, b=1, *, c, d=None): pass")
    assert read.defaulted == {"b", "d"}
    assert read.required == ("a", "c")
    assert read.none_defaulted == {"d"}


def test_a_default_on_the_bound_parameter_is_not_one_of_the_methods() -> None:
    assert _read("def f(self=None): pass").defaulted == frozenset()


def test_positional_only_parameters_cannot_be_named_but_are_still_required() -> None:
    read = _read("def f(self, a, /, b): pass")
    assert read.positional_only == {"a"}
    assert read.by_name == ("b",)
    assert read.required == ("a", "b")


def test_the_star_parameters_are_kept_apart() -> None:
    read = _read("def f(self, *tags, **fields): pass")
    assert read.every == ()
    assert read.vararg is not None and read.vararg.arg == "tags"
    assert read.kwarg is not None and read.kwarg.arg == "fields"
