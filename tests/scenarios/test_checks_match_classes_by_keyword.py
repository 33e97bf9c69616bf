"""Spec: a check's `match` class pattern takes positional sub-patterns only on the builtins that match
themselves (`case int(x)`, `case str()`); on any other class it names the attributes it reads
(`case C(x=p)`), and it asks `typing` for no type's origin or arguments (outside re-check rt19-R3 F1-F3).

`case C(p)` reads `getattr(subject, C.__match_args__[0])`: the name comes from data on the class, and
each round found one more way to put data there after the class was judged (a class built by
`typing.get_origin(typing.Type)`, which is `type`; an ABC registration before `@dataclass` added
`__match_args__`; `copy`'s `setattr` of a reduced object's state). It read the clock and a frame's
builtins, and the checks were verified. The channel is closed, not the ways to reach it: a keyword
sub-pattern's name is judged like any attribute."""

from __future__ import annotations

import pytest

from tests.scenarios.helpers import LENT, assert_refused, assert_verified, b1_check

CLOCK = "    match {subject}:\n        case C(f):\n            t = f()\n    return {lent} and t.year < 2100\n"
KEY = "    key = ''.join(['__', 'match', '_args', '__'])\n"

ATTACKS = {
    "a class built by typing.get_origin(typing.Type) (rt19-R3 F1)": (
        "import datetime\nimport typing\n\n\n",
        "    T = typing.get_origin(typing.Type)\n" + KEY + "    C = T('C', (datetime.datetime,), dict([(key, ('no' + 'w',))]))\n",
        "C(2020, 1, 1)", "get_origin"),
    "a virtual base registered before @dataclass (rt19-R3 F2)": (
        "import abc\nimport dataclasses\nimport datetime\n\n\ndef reg(cls):\n    cls.register(datetime.datetime)\n"
        "    return cls\n\n\n@dataclasses.dataclass\n@reg\nclass C(abc.ABC):\n    now: int\n\n\n",
        "", "datetime.datetime(2020, 1, 1)", "(x=p)"),
    "__match_args__ set by copy's reduce (rt19-R3 F3)": (
        "import copy\nimport datetime\n\n\nclass C(datetime.datetime):\n    pass\n\n\ndef mk():\n    return C\n\n\n"
        "class R:\n    def __reduce__(self):\n" + KEY.replace("    ", "        ", 1)
        + "        return (mk, (), (None, dict([(key, ('no' + 'w',))])))\n\n\n",
        "    copy.copy(R())\n", "C(2020, 1, 1)", "(x=p)"),
}


@pytest.mark.parametrize("form", sorted(ATTACKS))
def test_a_check_reading_an_attribute_named_by_data_through_a_match_is_refused(runtime, form: str) -> None:
    head, build, subject, named = ATTACKS[form]
    assert_refused(runtime, b1_check(build + CLOCK.format(subject=subject, lent=LENT), head), named)


@pytest.mark.parametrize("call", ["get_origin(typing.Type)", "get_args(typing.Type[int])"])
def test_a_check_asking_typing_for_a_types_origin_or_arguments_is_refused(runtime, call: str) -> None:
    """`typing.get_origin(typing.Type)` is `type` itself, and `get_args` hands out what a type was built on."""
    body = f"    return {LENT} and typing.{call} is not None\n"
    assert_refused(runtime, b1_check(body, "import typing\n\n\n"), call.split("(")[0])


def test_a_positional_match_on_a_dataclass_of_its_own_is_refused_naming_the_keyword_form(runtime) -> None:
    head = "import dataclasses\n\n\n@dataclasses.dataclass\nclass Book:\n    status: str\n\n\n"
    body = "    match Book(final_state['books']['b1']['status']):\n        case Book(s):\n            return s == 'lent'\n"
    assert_refused(runtime, b1_check(body + "    return False\n", head), "case Book(x=p)")


def test_a_keyword_match_on_a_dataclass_of_its_own_is_verified(runtime) -> None:
    head = "import dataclasses\n\n\n@dataclasses.dataclass\nclass Book:\n    status: str\n\n\n"
    body = "    match Book(final_state['books']['b1']['status']):\n        case Book(status=s):\n            return s == 'lent'\n"
    assert_verified(runtime, b1_check(body + "    return False\n", head))


@pytest.mark.parametrize("pattern", ["str(s) if s == 'lent'", "str() if final_state['books']['b1']['status'] == 'lent'"])
def test_a_positional_match_on_a_self_matching_builtin_is_verified(runtime, pattern: str) -> None:
    body = f"    match final_state['books']['b1']['status']:\n        case {pattern}:\n            return True\n    return False\n"
    assert_verified(runtime, b1_check(body))


def test_a_positional_match_on_int_is_verified(runtime) -> None:
    body = ("    match len(final_state['books']['b1']['status']):\n        case int(n) if n == 4:\n"
            f"            return {LENT}\n    return False\n")
    assert_verified(runtime, b1_check(body))


def test_a_positional_match_on_a_builtins_name_the_check_rebinds_is_refused(runtime) -> None:
    head = "import datetime\n\n\nclass int(datetime.datetime):\n    pass\n\n\n"
    body = "    match int(2020, 1, 1):\n        case int(f):\n            return f is not None\n    return False\n"
    assert_refused(runtime, b1_check(body, head), "(x=p)")


def test_a_dataclass_read_back_with_astuple_is_verified(runtime) -> None:
    head = "import dataclasses\n\n\n@dataclasses.dataclass\nclass Book:\n    status: str\n    lent: bool\n\n\n"
    body = ("    b = Book(final_state['books']['b1']['status'], True)\n"
            "    return dataclasses.astuple(b) == ('lent', True) and dataclasses.fields(b)[0].name == 'status'\n")
    assert_verified(runtime, b1_check(body, head))
