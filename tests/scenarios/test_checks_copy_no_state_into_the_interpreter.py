"""Spec: a check that makes `copy` write state it chose into a module, a class or a dataclass Field, or a
dunder into an object, is refused, whatever the static rule let through; honest copies and an unknown codec
name are judged as in plain Python (outside re-check rt20-R6 F1-F4; the jail's guards: tests/sandbox).

rt20-R6: a `__reduce__` returning (callable, args, state) made `copy._reconstruct` run
`dataclasses.__dict__.update(state)` (F2: `astuple` then read `gi_frame`, the builtins and the clock), set a
class's and an instance's `__dataclass_fields__` (F3: the clock), and copy a Field unfrozen, renamed to code
a subclass dataclass compiled into its `__eq__` (F1: any expression, the hook turned off). Each was verified."""

from __future__ import annotations

import pytest

from tests.scenarios.helpers import LENT, assert_refused, assert_verified, b1_check

MAKER = ("import copy\nimport dataclasses\nimport datetime\n\n\n"
         "KEY = ''.join(['__', 'dataclass', '_fields', '__'])\n\n\n"
         "class Mk:\n    def __init__(self, target, state):\n        self.target = target\n        self.state = state\n\n"
         "    def __reduce__(self):\n        return (self.target, (), self.state)\n\n\n"
         "@dataclasses.dataclass(init=False, repr=False)\nclass B:\n    x: int = 0\n\n\n"
         "class C(datetime.datetime):\n    pass\n\n\n"
         "def get_module():\n    return dataclasses\n\n\ndef get_class():\n    return B\n\n\n"
         "def get_instance():\n    return C(2020, 1, 1)\n\n\n")
ATTACKS = {
    "F1: a copied Field renamed to code": (
        "a dataclass Field", "    f = copy.copy(dataclasses.fields(B)[0])\n    f.name = 'x,1'\n"),
    "F1: a class's __dataclass_fields__": (
        "a class", "    copy.copy(Mk(get_class, (None, dict([(KEY, dict())]))))\n"),
    "F2: a module's globals": (
        "a module", "    copy.copy(Mk(get_module, dict([('fie' + 'lds', len)])))\n"),
    "F3: an instance's __dataclass_fields__": (
        "no attribute named", "    copy.copy(Mk(get_instance, dict([(KEY, dict())])))\n"),
}


@pytest.mark.parametrize("form", sorted(ATTACKS))
def test_a_check_making_copy_write_into_what_the_interpreter_reads_is_refused(runtime, form: str) -> None:
    named, body = ATTACKS[form]
    assert_refused(runtime, b1_check(body + f"    return {LENT}\n", MAKER), named)


def test_a_check_copying_its_own_dataclass_and_containers_is_verified(runtime) -> None:
    head = ("import collections\nimport copy\nimport dataclasses\n\n\n"
            "@dataclasses.dataclass\nclass Want:\n    status: str\n    seen: list\n\n\n")
    body = ("    want = Want('lent', [collections.OrderedDict(b1=1)])\n    twin = copy.deepcopy(want)\n"
            f"    return {LENT} and twin == want and twin.seen[0] is not want.seen[0] and copy.copy(want) == want\n")
    assert_verified(runtime, b1_check(body, head))


def test_a_check_asking_whether_a_name_is_a_codec_is_verified(runtime) -> None:
    """rt20-R6 F4: the codec search's import of `encodings.utf_42` was refused instead of plain Python's
    LookupError, and a check EnvScaler rewards [0.0, 1.0] was lost."""
    body = (f"    try:\n        'x'.encode('utf-' + '42')\n    except LookupError:\n        return {LENT}\n"
            "    return False\n")
    assert_verified(runtime, b1_check(body))
