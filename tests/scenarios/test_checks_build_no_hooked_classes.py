"""Spec: a check builds no class whose behaviour the interpreter reads from data, uses `object` freely as a
type, and names nothing that follows the interpreter's or a library's version (outside checks rt17 A-F1, A-F3,
A-F4, B-F1).

A `match` class pattern with positional sub-patterns reads `getattr(subject, C.__match_args__[i])`: a class
given `__match_args__` as data (a namespace dict, a metaclass whose `__instancecheck__` says yes, an Enum's
functional names) turned the pattern into `getattr` by a computed name, and reached the clock and a frame's
builtins. The creation forms are refused, since a key can be computed; so is a version read."""

from __future__ import annotations

import pytest

from tests.scenarios.helpers import LENT, assert_refused, assert_verified, b1_check

EVERY = "class Every(type):\n    def __instancecheck__(cls, obj):\n        return True\n\n\n"


CLOCK_BY_PATTERN = "    match {subject}:\n        case C(f):\n            t = f()\n    return {lent} and t.year < 2100\n"
HOOKED = {
    "a metaclass defined in the check": (
        EVERY, "    C = Every('C', (), {'__match_args__': ('no' + 'w',)})\n", "datetime.datetime", "metaclass"),
    "a metaclass= keyword": (
        "import abc\n\n\nclass C(metaclass=abc.ABCMeta):\n    pass\n\n\n", "", "datetime.datetime", "metaclass"),
    "three-argument type()": (
        "", "    C = type('C', (datetime.datetime,), {'__match_args__': ('no' + 'w',)})\n", "C(2020, 1, 1)",
        "type(name, bases, dict)"),
    "type() through another name": (
        "", "    make = type\n    C = make('C', (datetime.datetime,), {'__match_args__': ('no' + 'w',)})\n",
        "C(2020, 1, 1)", "type"),
    "make_dataclass with a namespace": (
        "import dataclasses\n\n\n",
        "    C = dataclasses.make_dataclass('C', [], bases=(datetime.datetime,), init=False,\n"
        "                                   namespace={'__match_args__': ('no' + 'w',)})\n", "C(2020, 1, 1)",
        "namespace"),
    "a hook name as a string": (
        "", "    key = '__match_args__'\n    C = {key: 1}\n", "datetime.datetime", "__match_args__"),
    "an Enum's functional names": (
        "import enum\n\n\n", "    C = enum.Enum('C', [('__match' + '_args__', ('no' + 'w',)), ('A', (2020, 1, 1))],"
        " type=datetime.datetime)\n", "C.A", "(x=p)"),
    "a dataclass field over a base's clock": (
        "import dataclasses\n\n\n@dataclasses.dataclass(init=False)\nclass P:\n    now: int\n\n\n"
        "class C(datetime.datetime, P):\n    pass\n\n\n", "", "C(2020, 1, 1)", "(x=p)"),
}


@pytest.mark.parametrize("form", sorted(HOOKED))
def test_a_check_building_a_class_the_interpreter_reads_by_data_is_refused(runtime, form: str) -> None:
    """rt17-A F1: each of these gave the clock through `case C(f)` and was verified. Those the jail refused
    when the class was made (an Enum's names, a field over a base's attribute) are now refused first at the
    channel, the positional sub-pattern (rt19-R3; the jail's own refusals: tests/sandbox)."""
    head, build, subject, named = HOOKED[form]
    body = build + CLOCK_BY_PATTERN.format(subject=subject, lent=LENT)
    assert_refused(runtime, b1_check(body, "import datetime\n" + head), named)


OBJECT_AS_A_TYPE = {
    "make_dataclass": ("import dataclasses\n", "dataclasses.make_dataclass('B', [('lent', object)])('lent').lent == 'lent'"),
    "NamedTuple": ("from typing import NamedTuple\n", "NamedTuple('R', [('lent', object)])('lent').lent == 'lent'"),
    "TypedDict": ("from typing import TypedDict\n", "TypedDict('T', {'lent': object})(lent='lent')['lent'] == 'lent'"),
    "make_dataclass from a comprehension": (
        "import dataclasses\n", "dataclasses.make_dataclass('B', [(k, object) for k in ['lent']])('lent').lent == 'lent'"),
    "cast": ("import typing\n", "typing.cast(object, 'lent') == 'lent'"),
    "a module-level alias": ("from typing import Dict\nState = Dict[str, object]\n", "isinstance({}, dict)"),
}


@pytest.mark.parametrize("form", sorted(OBJECT_AS_A_TYPE))
def test_a_check_naming_object_only_as_a_type_argument_is_verified(runtime, form: str) -> None:
    """rt17-A F3: these were refused as `object()` (its repr is an address), and the scenario was lost."""
    head, expr = OBJECT_AS_A_TYPE[form]
    assert_verified(runtime, b1_check(f"    return {LENT} and {expr}\n", head + "\n\n"))


def test_a_check_passing_object_where_it_is_called_is_refused(runtime) -> None:
    head = "import dataclasses\n\n\n"
    body = ("    B = dataclasses.make_dataclass('B', [('x', object, dataclasses.field(default_factory=object))])\n"
            f"    return {LENT} and repr(B().x) < '<object object at 0x7f'\n")
    assert_refused(runtime, b1_check(body, head), "object()")


VERSIONED = {
    "unicodedata.unidata_version": ("import unicodedata\n", "unicodedata.unidata_version >= '15'"),
    "keyword.softkwlist": ("import keyword\n", "'type' in keyword.softkwlist"),
    "keyword.kwlist": ("from keyword import kwlist\n", "len(kwlist) > 40"),
    "keyword.issoftkeyword": ("import keyword\n", "keyword.issoftkeyword('type')"),
    "hashlib.algorithms_guaranteed": ("import hashlib\n", "'sha3_256' not in hashlib.algorithms_guaranteed"),
    "hashlib.sha256 not called": ("import hashlib\n", "hashlib.sha256.__name__ == 'openssl_sha256'"),
    "decimal.MAX_PREC": ("import decimal\n", "decimal.MAX_PREC < 10 ** 10"),
}


@pytest.mark.parametrize("name", sorted(VERSIONED))
def test_a_check_reading_the_interpreters_or_a_librarys_version_is_refused(runtime, name: str) -> None:
    """rt17-A F4, rt17-B F1: these were verified under the jail's Python 3.11 and paid a do-nothing episode 1.0
    under 3.12/3.13 (the zlib version names were refused the same way already)."""
    head, expr = VERSIONED[name]
    assert_refused(runtime, b1_check(f"    return {LENT} or {expr}\n", head + "\n\n"), name)
