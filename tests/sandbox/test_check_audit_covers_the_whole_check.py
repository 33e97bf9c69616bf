"""The check audit hook covers the whole check, not only the call of `check_func`: its module-level code,
the formatting of the exception it raised, the dataclass helpers that read field names, and a refusal the
check caught (sandbox/jail_check_audit.py, jail_check_guards.py; outside re-check rt19-R3 F1, F2, F4).

rt19-R3 F2 reached a frame's builtins at module level, where the hook was off, and ran `os.cpu_count()` in
an exception's `__str__`, which the worker called after the hook was closed. F4: `'café'.encode('cp1252')`
imports its codec on first use, the hook refused that import, and a check that caught the error as "not
encodable" was verified with the opposite verdict from plain Python. These run checks in a real jail
without the static rule, as a check the rule missed would run."""

from __future__ import annotations

import pytest

from sandbox import SandboxPool
from tests.sandbox.helpers import assert_check_refused, one_check

STATE = {"credits": 5}
FRAME = "getattr((i for i in [0]), 'gi_' + 'frame')"


def _outcome(pool: SandboxPool, source: str):
    return one_check(pool, source, STATE)


MODULE_LEVEL = {
    "a generator's frame": ("gi_frame", f"B = {FRAME}.f_builtins\n"),
    "a file": ("open", "S = __builtins__['op' + 'en']('/proc/self/status').read()\n"),
    "a frame from a default argument": ("gi_frame", f"def f(x={FRAME}):\n    return x\n"),
    "a module read from disk": ("import xml", "X = __builtins__['__imp' + 'ort__']('xml.dom.' + 'minidom')\n"),
}


@pytest.mark.parametrize("form", sorted(MODULE_LEVEL))
def test_a_checks_module_level_code_is_stopped_like_its_check_func(audited: SandboxPool, form: str) -> None:
    event, head = MODULE_LEVEL[form]
    source = head + "\ndef check_func(final_state):\n    return final_state['credits'] == 5\n"
    assert_check_refused(audited, source, STATE, f"a check may not: {event}")


def test_an_exceptions_message_is_formatted_under_the_hook(audited: SandboxPool) -> None:
    """rt19-R3 F2: the worker formatted the error after closing the gate, and `__str__` is check code."""
    source = ("class Boom(Exception):\n    def __str__(self):\n"
              f"        return 'reached ' + str({FRAME}.f_builtins['len'])\n\n"
              "def check_func(final_state):\n    raise Boom()\n")
    outcome = _outcome(audited, source)
    assert outcome.passed is None and "Boom" in (outcome.error or "") and "reached" not in (outcome.error or ""), outcome
    assert "a check may not: gi_frame" in (outcome.error or ""), outcome


def test_an_honest_error_keeps_its_message_and_line(audited: SandboxPool) -> None:
    source = "def check_func(final_state):\n    return final_state['missing'] == 5\n"
    outcome = _outcome(audited, source)
    assert outcome.passed is None and "KeyError: 'missing'" in (outcome.error or "") and "line 2" in (outcome.error or ""), outcome


def test_a_refusal_the_check_caught_gives_no_verdict(audited: SandboxPool) -> None:
    """`try: ... except Exception: return False` must not turn a refusal into a verdict."""
    source = ("def check_func(final_state):\n    try:\n        __builtins__['op' + 'en']('/proc/self/status')\n"
              "    except Exception:\n        return final_state['credits'] == 5\n    return False\n")
    assert_check_refused(audited, source, STATE, "a check may not: open")


CODECS = {
    "cp1252": "'café'.encode('cp1252') == b'caf\\xe9'",
    "utf-16-le and iso8859_15": "'é'.encode('utf-16-le') == b'\\xe9\\x00' and 'é'.encode('iso8859_15') == b'\\xe9'",
    "idna": "'bücher.example'.encode('idna') == b'xn--bcher-kva.example'",
    "utf-8-sig and unicode_escape": "b'\\xef\\xbb\\xbfa'.decode('utf-8-sig') == 'a' and b'\\\\n'.decode('unicode_escape') == '\\n'",
    "a codec by alias": "'é'.encode('windows-1250') == b'\\xe9' and 'é'.encode('latin9') == b'\\xe9'",
}


@pytest.mark.parametrize("form", sorted(CODECS))
def test_a_check_encoding_text_with_a_standard_codec_is_verified(audited: SandboxPool, form: str) -> None:
    outcome = _outcome(audited, f"def check_func(final_state):\n    return final_state['credits'] == 5 and {CODECS[form]}\n")
    assert outcome.passed is True, outcome


def test_a_check_catching_an_encoding_error_gives_plain_pythons_verdict(audited: SandboxPool) -> None:
    """rt19-R3 F4: `encodable('café')` was False in the jail (the codec import refused and caught), True in Python."""
    source = ("def encodable(text):\n    try:\n        text.encode('cp1252')\n    except Exception:\n        return False\n"
              "    return True\n\ndef check_func(final_state):\n    return final_state['credits'] == 5 and encodable('café')\n")
    plain: dict = {}
    exec(compile(source, "<check>", "exec"), plain)
    assert _outcome(audited, source).passed is plain["check_func"](STATE) is True


DATACLASS_BY_DATA = ("import dataclasses\nimport datetime\n\n@dataclasses.dataclass\nclass P:\n    now: int\n\n"
                     "T = type\nC = T('C', (datetime.datetime,), {'__dataclass_fields__': P.__dataclass_fields__})\n\n"
                     "def check_func(final_state):\n    return len(dataclasses.{call}(C(2020, 1, 1))) == 1\n")


@pytest.mark.parametrize("call", ["astuple", "asdict", "fields"])
def test_a_dataclass_helper_on_a_class_made_from_data_is_refused(audited: SandboxPool, call: str) -> None:
    """rt19-R3 F1: a class built by `type` reached at run time holds any `__dataclass_fields__`; `astuple` and
    `asdict` read each field name from the object (`now` on a `datetime`: the clock)."""
    assert_check_refused(audited, DATACLASS_BY_DATA.replace("{call}", call), STATE, "an attribute of its base datetime")


def test_a_dataclass_read_back_with_its_helpers_is_verified(audited: SandboxPool) -> None:
    source = ("import dataclasses\n\n@dataclasses.dataclass\nclass D:\n    credits: int\n    kind: str = 'x'\n\n"
              "def check_func(final_state):\n    d = D(final_state['credits'])\n"
              "    return dataclasses.astuple(d) == (5, 'x') and dataclasses.asdict(d)['credits'] == 5 \\\n"
              "        and dataclasses.replace(d, kind='y').kind == 'y' and [f.name for f in dataclasses.fields(D)] == ['credits', 'kind']\n")
    assert _outcome(audited, source).passed is True


MADE_BY_DATA = {
    "an Enum's functional member names": (
        "Enum member name", "import datetime\nimport enum\n\ndef check_func(final_state):\n"
        "    C = enum.Enum('C', [('__match' + '_args__', ('no' + 'w',)), ('A', (2020, 1, 1))], type=datetime.datetime)\n"
        "    return final_state['credits'] == 5\n"),
    "a dataclass field over a base's clock": (
        "an attribute of its base datetime", "import dataclasses\nimport datetime\n\n"
        "@dataclasses.dataclass(init=False)\nclass P:\n    now: int\n\nclass C(datetime.datetime, P):\n    pass\n\n"
        "def check_func(final_state):\n    return final_state['credits'] == 5\n"),
}


@pytest.mark.parametrize("form", sorted(MADE_BY_DATA))
def test_a_class_whose_match_names_come_from_data_is_refused_when_made(audited: SandboxPool, form: str) -> None:
    """rt17-A F1's forms, refused by the jail when the class is made, whatever the static rule missed (it now
    refuses the positional `case C(f)` they were read through first: tests/scenarios)."""
    why, source = MADE_BY_DATA[form]
    assert_check_refused(audited, source, STATE, why)


def test_a_check_reads_no_frame_through_a_standard_library_helper(audited: SandboxPool) -> None:
    """rt20-R6 F1 step 5: `inspect` (loaded in the jail) read `sys._getframe` for the check, as a trusted caller,
    and walked to the worker's frame. Only namedtuple, Enum and typing read their caller's frame for a check."""
    source = ("import inspect\n\ndef check_func(final_state):\n    inspect.currentframe()\n"
              "    return final_state['credits'] == 5\n")
    assert_check_refused(audited, source, STATE, "a check may not: sys._getframe")


GATE_FRAME = ("import traceback\n\ndef gate_and_code():\n    try:\n        raise ValueError\n    except ValueError as e:\n"
              "        frame = next(traceback.walk_tb(e.__traceback__))[0]\n"
              "    while 'gate' not in frame.f_locals:\n        frame = frame.f_back\n"
              "    return frame.f_locals['gate'], frame.f_locals['code']\n\n"
              "def check_func(final_state):\n    gate, code = gate_and_code()\n    {call}\n"
              "    return len(__builtins__['op' + 'en']('/proc/self/status').read()) > 0\n")
OPEN_THEN_FORGET = ("try:\n        __builtins__['op' + 'en']('/proc/self/status')\n    except Exception:\n        pass\n"
                    "    gate.refused.clear()\n    return final_state['credits'] == 5")


@pytest.mark.parametrize("call", ["gate.stop(code)", "gate.start(None)", OPEN_THEN_FORGET])
def test_a_check_that_reaches_the_workers_gate_cannot_open_it(audited: SandboxPool, call: str) -> None:
    """rt20-R6 F1 step 5: `gate.stop(code)` from the worker's `run_check` locals turned the hook off; the gate
    now acts only for the worker's own code, whatever frame hands it over."""
    outcome = _outcome(audited, GATE_FRAME.replace("{call}", call))
    assert outcome.passed is None and "a check may not" in (outcome.error or ""), outcome


UNKNOWN_CODECS = {
    "str.encode": "'x'.encode('utf-42')",
    "bytes.decode": "b'abc'.decode('x-mac-foo')",
}


@pytest.mark.parametrize("form", sorted(UNKNOWN_CODECS))
def test_an_unknown_codec_name_gives_lookup_error_as_in_plain_python(audited: SandboxPool, form: str) -> None:
    """rt20-R6 F4: the codec search imports `encodings.<name>`; the hook refused that import instead of
    answering it as plain Python does (no such module: "unknown encoding")."""
    source = ("def known(name):\n    try:\n        " + UNKNOWN_CODECS[form] + "\n    except LookupError:\n"
              "        return False\n    return True\n\n"
              "def check_func(final_state):\n    return final_state['credits'] == 5 and not known('x')\n")
    plain: dict = {}
    exec(compile(source, "<check>", "exec"), plain)
    assert _outcome(audited, source).passed is plain["check_func"](STATE) is True
