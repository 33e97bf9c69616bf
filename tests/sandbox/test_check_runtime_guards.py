"""A check runs under run-time guards where the static purity rule cannot see what a name will hold
(sandbox/jail_check_guards.py): `dataclasses` writes field names into code it executes, and a check can
annotate any string through `type(...)`."""

from __future__ import annotations

import pytest

from sandbox import SandboxPool
from sandbox.checks import run_checks

STATE = {"credits": 5}


def _refused(jail: SandboxPool, source: str, why: str) -> None:
    [outcome] = run_checks(jail, [source], STATE, STATE, 5.0)
    assert outcome.passed is None and why in (outcome.error or ""), outcome


def _passes(jail: SandboxPool, source: str) -> None:
    [outcome] = run_checks(jail, [source], STATE, STATE, 5.0)
    assert outcome.passed is True, outcome



# dataclasses writes field names into code it executes; a check can annotate any string through `type(...)`.
# A name with a tab compiled, and names with line breaks came close to running statements (review of rt14-A F1).
ODD_FIELD = ("import dataclasses\n"
             "def check_func(final_state):\n"
             "    C = dataclasses.dataclass(type('C', (), {'__annotations__': {'a\\t': int}}))\n"
             "    return final_state['credits'] == 5\n")


def test_a_dataclass_whose_field_name_is_no_identifier_is_refused_in_a_check(jail: SandboxPool) -> None:
    _refused(jail, ODD_FIELD, "field names must be identifiers")


# rt16-R F1: dataclasses takes getattr(cls, name) as a field's default, so a field named like an inherited
# attribute hands the check that attribute: the clock through a datetime base, every loaded class (FileIO)
# through type.__subclasses__. Both were verified, and the clock one paid its reference 0.0 after a deadline.
INHERITED_DEFAULTS = {
    "the clock through a datetime base": (
        "import dataclasses\nimport datetime\n\n"
        "@dataclasses.dataclass(init=False)\nclass Clock(datetime.datetime):\n    utcnow: int\n\n"
        "def check_func(final_state):\n    return dataclasses.fields(Clock)[0].default().year > 2000\n"),
    "the metaclass's __subclasses__": (
        "import dataclasses\n"
        "S = dataclasses.make_dataclass('S', [('__subclasses__', int)], bases=(type,), init=False)\n\n"
        "def check_func(final_state):\n    return len(dataclasses.fields(S)[0].default(object)) > 0\n"),
    "a name computed at run time": (
        "import dataclasses\nimport datetime\n"
        "C = dataclasses.make_dataclass('C', [('no' + 'w', int)], bases=(datetime.datetime,), init=False)\n\n"
        "def check_func(final_state):\n    return dataclasses.fields(C)[0].default().year > 2000\n"),
}


@pytest.mark.parametrize("form", sorted(INHERITED_DEFAULTS))
def test_a_dataclass_field_named_like_an_inherited_attribute_is_refused(jail: SandboxPool, form: str) -> None:
    _refused(jail, INHERITED_DEFAULTS[form], "its default would be that attribute")


HONEST = {
    "a dataclass of its own": ("from dataclasses import dataclass\n"
                               "def check_func(final_state):\n"
                               "    @dataclass\n    class Want:\n        credits: int\n"
                               "    return Want(final_state['credits']) == Want(5)\n"),
    "one redeclaring its base dataclass's field": (
        "from dataclasses import dataclass\n\n"
        "@dataclass\nclass Base:\n    credits: int = 0\n\n"
        "@dataclass\nclass Want(Base):\n    credits: int = 5\n    name: str = 'x'\n\n"
        "def check_func(final_state):\n    return Want().credits == final_state['credits']\n"),
}


@pytest.mark.parametrize("form", sorted(HONEST))
def test_an_honest_dataclass_in_a_check_still_runs(jail: SandboxPool, form: str) -> None:
    _passes(jail, HONEST[form])


# rt17-A F2: dataclasses.fields(C) hands out the live Field objects. Renaming one after @dataclass ran made
# astuple/asdict/replace read getattr(obj, 'now') on a datetime subclass (the clock), and a subclass dataclass
# compiled the new name into its generated __eq__, run with the real builtins. Both were verified.
RENAMED = {
    "the clock through astuple": (
        "import dataclasses\nimport datetime\n\n"
        "@dataclasses.dataclass(init=False)\nclass D(datetime.datetime):\n    'd'\n    x: int = 0\n\n"
        "def check_func(final_state):\n    dataclasses.fields(D)[0].name = 'no' + 'w'\n"
        "    return dataclasses.astuple(D(2020, 1, 1))[0]().year > 2000\n"),
    "code in a subclass's __eq__": (
        "import dataclasses\n\n"
        "@dataclasses.dataclass\nclass A:\n    x: int = 0\n\n"
        "def check_func(final_state):\n    dataclasses.fields(A)[0].name = 'x if len([]) == 0 else 1'\n"
        "    B = dataclasses.make_dataclass('B', [], bases=(A,))\n    return B() == B()\n"),
}


@pytest.mark.parametrize("form", sorted(RENAMED))
def test_a_dataclass_field_cannot_be_changed_after_the_class_is_made(jail: SandboxPool, form: str) -> None:
    _refused(jail, RENAMED[form], "dataclass fields are frozen")


def test_a_check_reading_its_dataclass_fields_still_runs(jail: SandboxPool) -> None:
    _passes(jail, "import dataclasses\n\n@dataclasses.dataclass\nclass W:\n    credits: int = 5\n\n"
                  "def check_func(final_state):\n    return [f.name for f in dataclasses.fields(W)] == ['credits']"
                  " and dataclasses.asdict(W()) == final_state\n")
