"""Spec: a check reaches nothing but the state, whatever the spelling. The rule of test_checks_are_pure.py
was walked around by outside checks rt11: a generator's frame gave eval and __import__ (A-F5), an allowed
module drew from `random` (`statistics.NormalDist().samples`, A-F1/C-F1), and str.format's field lookup
read `calendar.sys.argv`, the sandbox's limits (B-F2); rt12-A then reached a frame through a match class
pattern, the builtins through `functools.singledispatch`, and the host's packages through a guarded import.
Each is refused as `nondeterministic`; the honest
spellings next to them (`"{}".format(x)`, f-strings of state values) and a usage block under
`if __name__ == '__main__':`, which never runs (C-F5), are not."""

from __future__ import annotations

import pytest

from envscaler_core.models.scenario import CheckSpec
from envscaler_core.scenarios import verify_scenario
from tests.scenarios.helpers import LENT_B1, library_env, scenario

TIMEOUT = 2.0
LENT = "final_state['books']['b1']['status'] == 'lent'"
EVAL = "(i for i in [0]).gi_frame.f_builtins['eval']"


MATCHED_FRAME = "def _frame_of(g):\n    G = type(g)\n    match g:\n        case G(gi_frame=f):\n            return f is None\n"


def _check(body: str, head: str = "", tail: str = "") -> CheckSpec:
    return CheckSpec(item="b1 is lent", code=f"{head}def check_func(final_state):\n    return {body}\n{tail}")


def _refused(runtime, check: CheckSpec, named: str) -> None:
    report = verify_scenario(scenario([check]), library_env(), runtime, TIMEOUT)
    assert not report.ok and report.failure == "nondeterministic", report.reason
    assert named in (report.reason or ""), report.reason


def _verified(runtime, check: CheckSpec) -> None:
    report = verify_scenario(scenario([LENT_B1, check]), library_env(), runtime, TIMEOUT)
    assert report.ok, report.reason


@pytest.mark.parametrize(("head", "body", "named"), [
    # a frame, code object or generator: a step from the globals and the builtins (A-F5)
    ("", f"{LENT} or {EVAL}(\"__import__('time').time()\") > 4102444800", "gi_frame"),
    ("", f"{LENT} or (i for i in [0]).gi_frame.f_globals['__builtins__']['open'] is None", "f_globals"),
    ("", f"{LENT} or (i for i in [0]).gi_frame.f_back is None", "f_back"),
    ("async def co():\n    pass\n", f"{LENT} or co().cr_frame.f_builtins is None", "cr_frame"),
    ("", f"{LENT} or len((i for i in [0]).gi_code.co_consts) > 9", "gi_code"),
    # chance, the locale or the host, read by a name of a module a check may import (A-F1, C-F1)
    ("import statistics\n", f"{LENT} or statistics.NormalDist().samples(1)[0] > 1.645", "samples"),
    ("from statistics import NormalDist\n", f"{LENT} or NormalDist().samples(1, seed=None)[0] > 1.645", "samples"),
    ("import calendar\n", f"{LENT} or calendar.LocaleTextCalendar().formatmonthname(2026, 1, 9) == 'x'",
     "LocaleTextCalendar"),
    ("from calendar import different_locale\n", f"{LENT} or different_locale is None", "different_locale"),
    ("import json.tool\n", f"{LENT} or json.tool.main() is None", "main"),
    # str.format's field lookup, attribute access the scan cannot read (B-F2)
    ("import calendar\n", f"{LENT} or '-S' in '{{0.sys.argv}}'.format(calendar)", "{0.sys.argv}"),
    ("import calendar\n", f"{LENT} or '{{c.sys.argv}}'.format_map({{'c': calendar}}) == ''", "{c.sys.argv}"),
    ("", f"{LENT} or '{{0[books]}}'.format(final_state) == ''", "{0[books]}"),
    ("", f"{LENT} or '{{0:{{1.real}}}}'.format(1, 2) == ''", "{1.real}"),
    ("import calendar\n", f"{LENT} or ('{{0.' + 'sys}}').format(calendar) == ''", "not a literal"),
    ("import calendar\n", f"{LENT} or str.format('{{0.sys}}', calendar) == ''", "not a literal"),
    # a match class pattern reads attributes by keyword; singledispatch evaluates string annotations with the
    # builtins; a guarded import of a module the jail lacks answers from its handler here only (rt12-A F1, F2, F4)
    (MATCHED_FRAME, f"{LENT} or _frame_of((i for i in [0]))", "G(gi_frame=...)"),
    ("from functools import singledispatch\n", f"{LENT} or singledispatch(len) is None", "singledispatch"),
    ("def numpy_missing():\n    try:\n        import numpy\n    except ImportError:\n        return True\n"
     "    return False\n", f"{LENT} or numpy_missing()", "import numpy"),
    ("def _load():\n    import numpy\n\n\ndef numpy_missing():\n    try:\n        _load()\n"
     "    except Exception:\n        return True\n    return False\n", f"{LENT} or numpy_missing()",
     "import numpy"),  # the import in a helper, caught by its caller (rt13 F2)
])
def test_a_check_reaching_past_the_state_through_a_frame_an_allowed_module_or_a_format_field_is_refused(
        runtime, head: str, body: str, named: str) -> None:
    _refused(runtime, _check(body, head), named)


def test_a_check_using_a_compiled_pattern_is_verified(runtime) -> None:
    _verified(runtime, _check(f"{LENT} and bool(re.compile(r'^[a-z]+$').match('lent')) "
                              "and bool(rc(r'b[0-9]').match('b1'))", head="import re\nfrom re import compile as rc\n"))


def test_a_check_formatting_state_values_by_position_name_or_f_string_is_verified(runtime) -> None:
    book = "final_state['books']['b1']"
    _verified(runtime, _check(
        f"'{{}} is {{}}'.format({book}['status'], 'lent') == '{{0}} is lent'.format('lent') "
        f"and '{{s:>5}}'.format(s={book}['status']) == ' lent' "
        f"and '{{s}}'.format_map({{'s': 1}}) == '1' and f\"{{{book}['status']}}\" == 'lent'"))


def test_a_check_passing_an_address_builtin_uncalled_is_refused(runtime) -> None:
    _refused(runtime, _check(f"{LENT} and sorted([final_state, {{}}], key=id)[0] is final_state"), "id()")


@pytest.mark.parametrize("head", [
    "from typing import Dict\n\n\ndef is_true(v: object) -> bool:\n    return v is True\n\n\n",
    "class Want(object):\n    lent = 'lent'\n\n\n",
    "def _typed(v: Dict[str, object]) -> object:\n    return v\n\n\n",
])
def test_a_check_naming_object_as_a_type_is_verified(runtime, head: str) -> None:
    """rt16-R F4: `object` in an annotation, a class's bases or `isinstance` is the type, not a value whose repr
    is an address; such honest checks were refused as `object()`."""
    head = head if "Dict" not in head or head.startswith("from") else "from typing import Dict\n\n\n" + head
    _verified(runtime, _check(f"{LENT} and isinstance(final_state, object)", head=head))


USAGE = ("\n\nif __name__ == '__main__':\n    import sys\n    from datetime import datetime\n"
         "    with open(sys.argv[1]) as f:\n        print(datetime.now(), check_func(f.read()))\n")


@pytest.mark.parametrize("guard", ["__name__ == '__main__'", "'__main__' == __name__"])
def test_a_usage_block_under_the_main_guard_is_not_judged(runtime, guard: str) -> None:
    _verified(runtime, _check(LENT, tail=USAGE.replace("__name__ == '__main__'", guard)))


@pytest.mark.parametrize("head", ["__name__ = '__main__'\n", "__builtins__['__name__'] = '__main__'\n",
                                  "def main():\n    global __name__\n    __name__ = '__main__'\n\n\nmain()\n"])
def test_a_main_guard_the_check_could_make_true_is_judged(runtime, head: str) -> None:
    _refused(runtime, _check(LENT, head=head, tail=USAGE), "import sys")


def test_the_else_branch_of_the_main_guard_is_judged(runtime) -> None:
    _refused(runtime, _check(LENT, tail="\nif __name__ == '__main__':\n    pass\nelse:\n    import os\n"), "import os")
