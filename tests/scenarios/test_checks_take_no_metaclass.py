"""Spec: a check takes no metaclass as a value, and uses `type(x)` only to compare or test it (outside re-check
rt18-R1 F1).

`abc.ABCMeta(name, bases, dict)` and `type(P)(name, bases, dict)` (`type(P)` is `type` for any plain class) made a
class from a namespace with no class statement; a computed `'__match_args__'` key then made `case C(f)` read
the clock, and `C.register(type(obj))` any attribute of any object. Every metaclass an allowed module holds is
refused by name (found by looking, not listed), and the result of `type(x)` may not be called, stored, passed
or returned."""

from __future__ import annotations

import pytest

from envscaler_core.scenarios.check_modules import MODULE_NAMES
from tests.scenarios.helpers import LENT, assert_refused, assert_verified, b1_check

KEY = "    key = ''.join(['__', 'match', '_args', '__'])\n"
CLOCK = "    match C(2020, 1, 1):\n        case C(f):\n            t = f()\n    return {lent} and t.year < 2100\n"


METACLASS_VALUES = {
    "abc.ABCMeta": ("import abc\n", "abc.ABCMeta", "ABCMeta"),
    "from abc import ABCMeta": ("from abc import ABCMeta\n", "ABCMeta", "ABCMeta"),
    "enum.EnumMeta": ("import enum\n", "enum.EnumMeta", "EnumMeta"),
    "enum.EnumType": ("import enum\n", "enum.EnumType", "EnumType"),
    "numbers.ABCMeta": ("import numbers\n", "numbers.ABCMeta", "ABCMeta"),
    "typing.NamedTupleMeta": ("import typing\n", "typing.NamedTupleMeta", "NamedTupleMeta"),
}


@pytest.mark.parametrize("form", sorted(METACLASS_VALUES))
def test_a_check_naming_a_metaclass_of_an_allowed_module_is_refused(runtime, form: str) -> None:
    head, meta, named = METACLASS_VALUES[form]
    body = KEY + f"    C = {meta}('C', (datetime.datetime,), dict([(key, ('no' + 'w',))]))\n" + CLOCK.format(lent=LENT)
    assert_refused(runtime, b1_check(body, "import datetime\n" + head + "\n\n"), f"{named} (a metaclass")


def test_every_metaclass_of_an_allowed_module_is_found_by_looking() -> None:
    metaclasses = {(module, name) for module, names in MODULE_NAMES.items() for name, why in names.items()
                   if why.startswith("a metaclass")}
    assert {("abc", "ABCMeta"), ("enum", "EnumMeta"), ("enum", "EnumType"), ("typing", "NamedTupleMeta"),
            ("numbers", "ABCMeta")} <= metaclasses


TYPE_OF_USED = {
    "called": ("class P:\n    pass\n\n\n", KEY + "    C = type(P)('C', (datetime.datetime,), dict([(key, ('no' + 'w',))]))\n"
               + CLOCK.format(lent=LENT)),
    "stored": ("", f"    t = type(final_state)\n    return {LENT} and t is dict\n"),
    "passed": ("", f"    return {LENT} and callable(type(final_state))\n"),
    "returned": ("", "    return type(final_state)\n"),
}


@pytest.mark.parametrize("use", sorted(TYPE_OF_USED))
def test_the_result_of_type_x_used_other_than_compared_is_refused(runtime, use: str) -> None:
    head, body = TYPE_OF_USED[use]
    assert_refused(runtime, b1_check(body, "import datetime\n" + head), "type(x)")


TYPE_OF_COMPARED = {
    "==": "type(final_state) == dict",
    "is not": "type(final_state['books']) is not list",
    "in": "type(final_state['books']['b1']['status']) in (str, bytes)",
    "isinstance": "isinstance({}, type(final_state))",
    "issubclass": "issubclass(type(final_state), dict)",
}


@pytest.mark.parametrize("use", sorted(TYPE_OF_COMPARED))
def test_the_result_of_type_x_compared_or_tested_is_verified(runtime, use: str) -> None:
    assert_verified(runtime, b1_check(f"    return {LENT} and {TYPE_OF_COMPARED[use]}\n"))


CATCHER = "class Catch:\n    def __eq__(self, other):\n        self.got = other\n        return True\n\n\n"


def test_type_x_compared_with_an_object_of_the_check_is_refused(runtime) -> None:
    """`type(P) == o` calls `o.__eq__(type)` when `type.__eq__` declines: the object would hold `type`."""
    body = f"    o = Catch()\n    return {LENT} and type(final_state) == o\n"
    assert_refused(runtime, b1_check(body, CATCHER), "type(x)")
