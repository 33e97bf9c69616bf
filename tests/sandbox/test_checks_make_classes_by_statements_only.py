"""A check makes a class by a class statement only, and while it runs it reaches no frame, file, code
compiler, process or socket (sandbox/jail_check_guards.py), whatever the static rule missed.

Outside re-check rt18-R1 F1: `abc.ABCMeta('C', (datetime,), dict([(computed '__match_args__', ('now',))]))`
made a class from a namespace without a class statement, so it was never judged; `case C(f)` then read the
clock, and with `C.register(type(obj))` or a computed `__subclasshook__` key any attribute of any object
(`gi_frame` -> `f_builtins` -> `__import__`, `open`). These run the checks in a real jail without the static
rule, as a check the rule missed would run."""

from __future__ import annotations

import pytest

from sandbox import SandboxPool
from tests.sandbox.helpers import one_check

STATE = {"credits": 5}
KEY = "    key = ''.join(['__', 'match', '_args', '__'])\n"


def _outcome(pool: SandboxPool, source: str):
    return one_check(pool, source, STATE)


METACLASS_CALLS = {
    "abc.ABCMeta over datetime (the clock)": (
        "import abc\nimport datetime\n\ndef check_func(final_state):\n" + KEY
        + "    C = abc.ABCMeta('C', (datetime.datetime,), dict([(key, ('no' + 'w',))]))\n"
        "    match C(2020, 1, 1):\n        case C(f):\n            return f().year > 2000\n    return False\n"),
    "abc.ABCMeta with register (any attribute)": (
        "import abc\n\ndef check_func(final_state):\n" + KEY
        + "    C = abc.ABCMeta('C', (), dict([(key, ('gi_' + 'frame',))]))\n    C.register(type(final_state))\n"
        "    match final_state:\n        case C(v):\n            return v is None\n    return False\n"),
    "enum.EnumMeta called with a namespace": (
        "import enum\n\ndef check_func(final_state):\n"
        "    E = enum.EnumMeta('E', (enum.Enum,), enum.EnumMeta.__prepare__('E', (enum.Enum,)))\n"
        "    return final_state['credits'] == 5\n"),
}


@pytest.mark.parametrize("form", sorted(METACLASS_CALLS))
def test_a_check_calling_a_metaclass_is_refused_in_the_jail(audited: SandboxPool, form: str) -> None:
    outcome = _outcome(audited, METACLASS_CALLS[form])
    assert outcome.passed is None and "class statement" in (outcome.error or ""), outcome


def test_a_class_statement_with_match_args_and_a_subclass_hook_is_refused(audited: SandboxPool) -> None:
    source = ("import abc\n\nclass C(abc.ABC):\n    __match_args__ = ('gi_' + 'frame',)\n\n"
              "    @classmethod\n    def __subclasshook__(cls, other):\n        return True\n\n"
              "def check_func(final_state):\n    match (i for i in [0]):\n        case C(f):\n"
              "            return f is not None\n    return False\n")
    outcome = _outcome(audited, source)
    assert outcome.passed is None and "__subclasshook__" in (outcome.error or ""), outcome


REACHES = {
    "a generator's frame": ("gi_frame", "def check_func(final_state):\n"
                            "    return getattr((i for i in [0]), 'gi_' + 'frame') is not None\n"),
    "a function's code": ("__code__", "def check_func(final_state):\n"
                          "    return getattr(check_func, '__co' + 'de__') is not None\n"),
    "a file": ("open", "def check_func(final_state):\n"
               "    return len(__builtins__['op' + 'en']('/proc/self/status').read()) > 0\n"),
    "the compiler": ("compile", "def check_func(final_state):\n"
                     "    return __builtins__['ev' + 'al']('1 + 1') == 2\n"),
    "the host": ("os.listdir", "def check_func(final_state):\n"
                 "    return len(__builtins__['__imp' + 'ort__']('o' + 's').listdir('/')) > 0\n"),
    "a module read from disk": ("import xml", "def check_func(final_state):\n"
                                "    return __builtins__['__imp' + 'ort__']('xml.dom.' + 'minidom') is not None\n"),
}


@pytest.mark.parametrize("form", sorted(REACHES))
def test_a_check_reaching_past_pure_computation_is_stopped_at_run_time(audited: SandboxPool, form: str) -> None:
    """Defence in depth: an audit hook, active only while the check's own code runs, refuses these events."""
    event, source = REACHES[form]
    outcome = _outcome(audited, source)
    assert outcome.passed is None and f"check may not: {event}" in (outcome.error or ""), outcome


HONEST = {
    "an ABC subclass": ("import abc\n\nclass Base(abc.ABC):\n    @abc.abstractmethod\n    def n(self): ...\n\n"
                        "class Five(Base):\n    def n(self):\n        return 5\n\n"
                        "def check_func(final_state):\n    return Five().n() == final_state['credits']\n"),
    "a namedtuple and a dataclass": (
        "import collections\nimport dataclasses\n\nP = collections.namedtuple('P', 'credits')\n\n"
        "@dataclasses.dataclass\nclass D:\n    credits: int\n\n"
        "def check_func(final_state):\n    return P(5) == (5,) and D(5) == D(final_state['credits'])\n"),
    "an Enum, functional and by statement": (
        "import enum\n\nclass Kind(enum.Enum):\n    A = 1\n\n"
        "def check_func(final_state):\n    E = enum.Enum('E', 'X Y')\n    return E.X.value == 1 and Kind(1) is Kind.A\n"),
    "a strptime and a statistics call": (
        "import datetime\nimport statistics\n\ndef check_func(final_state):\n"
        "    d = datetime.datetime.strptime('2020-01-02', '%Y-%m-%d')\n"
        "    return d.day == 2 and statistics.mean([4, 6]) == final_state['credits']\n"),
    "an exception caught and its message read": (
        "def check_func(final_state):\n    try:\n        int('x')\n    except ValueError as e:\n"
        "        return 'invalid' in str(e) and final_state['credits'] == 5\n"),
}


@pytest.mark.parametrize("form", sorted(HONEST))
def test_an_honest_check_still_runs_under_the_class_and_audit_guards(audited: SandboxPool, form: str) -> None:
    outcome = _outcome(audited, HONEST[form])
    assert outcome.passed is True, outcome


def test_the_jail_warms_exactly_the_modules_a_check_may_import() -> None:
    """The hook refuses `open` and `import` while a check runs, so every module a check may import is imported
    by the worker before; the jail runs no envscaler_core code and keeps its own copy of the list."""
    from envscaler_core.scenarios.check_modules import PURE_MODULES
    from sandbox.jail_check_audit import CHECK_MODULES

    assert set(CHECK_MODULES) == set(PURE_MODULES)
