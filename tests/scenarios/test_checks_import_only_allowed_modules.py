"""Spec: a check imports only the modules docs/scenarios_and_rollouts.md (step 3) lists, and reaches no
attribute by a name it computes. Outside checks rt14 found both edges of that rule wrong:

* too loose: `functools.update_wrapper`/`wraps` read any attribute named in `updated=` (a generator's
  frame, then the builtins: A-F1), and a module outside the standard library whose ImportError is
  swallowed without a `try` (a `with` whose `__exit__` returns True, a helper, `__del__`) was verified,
  then False where the module is installed (A-F3);
* too tight: honest checks importing modules that compute (`uuid.UUID(x)` format checks, `difflib`,
  `urllib.parse`, `hashlib`, ...: C-F2) or importing `collections.abc`, or reading their own fields named
  like a module (`u.email`, `self.os`: A-F5), were refused, with a reason cut mid-list (C-F2).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from envscaler_core.models.scenario import CheckSpec
from envscaler_core.scenarios import verify_scenario
from envscaler_core.scenarios.check_modules import PURE_MODULES
from envscaler_core.scenarios.determinism import static_reason
from tests.scenarios.helpers import LENT_B1, library_env, scenario

TIMEOUT = 2.0
LENT = "final_state['books']['b1']['status'] == 'lent'"
GRAB = ("def grab(obj, name):\n    class Box:\n        def update(self, v):\n            self.v = v\n"
        "    bx = Box()\n    W = type('W', (), {name: bx})\n    {call}\n    return bx.v\n")
FRAME = f"{LENT} or grab(grab((i for i in [0]), 'gi' + '_frame'), 'f' + '_builtins') is None"
SWALLOW = "class S:\n    def __enter__(self):\n        return self\n    def __exit__(self, *a):\n        return True\n"
DOCS = Path(__file__).resolve().parents[2] / "docs" / "scenarios_and_rollouts.md"


def _check(body: str, head: str = "") -> CheckSpec:
    return CheckSpec(item="b1 is lent", code=f"{head}def check_func(final_state):\n    return {body}\n")


def _refused(runtime, check: CheckSpec, named: str) -> str:
    report = verify_scenario(scenario([check]), library_env(), runtime, TIMEOUT)
    assert not report.ok and report.failure == "nondeterministic", report.reason
    assert named in (report.reason or ""), report.reason
    return report.reason or ""


def _verified(runtime, check: CheckSpec) -> None:
    report = verify_scenario(scenario([LENT_B1, check]), library_env(), runtime, TIMEOUT)
    assert report.ok, report.reason


@pytest.mark.parametrize(("head", "body", "named"), [
    # reading an attribute by a computed name (A-F1), every spelling of the two functools functions
    ("import functools\n" + GRAB.replace("{call}", "functools.update_wrapper(W(), obj, assigned=(), updated=(name,))"),
     FRAME, "update_wrapper"),
    ("import functools\n" + GRAB.replace("{call}", "functools.wraps(obj, assigned=(), updated=(name,))(W())"),
     FRAME, "wraps"),
    ("from functools import update_wrapper as uw\n" + GRAB.replace("{call}", "uw(W(), obj, (), (name,))"),
     FRAME, "update_wrapper"),
    ("import enum\n", f"{LENT} or enum.global_enum is None", "global_enum"),  # writes into a module's globals
    # a module outside the allowed ones, whatever swallows its ImportError (A-F3)
    (SWALLOW, f"{LENT} and ok()", "import numpy"),
    ("def load():\n    import numpy\n", f"{LENT} or load()", "import numpy"),
    ("class D:\n    def __del__(self):\n        import numpy\n", f"{LENT} and D() is not None", "import numpy"),
    ("import yaml\n", f"{LENT} or yaml is None", "import yaml"),
    # the names of an allowed module that read chance, the host or stdin (C-F2's audit)
    ("import uuid\n", f"{LENT} or uuid.uuid4().version == 9", "uuid4"),
    ("from uuid import uuid1\n", f"{LENT} or uuid1().version == 9", "uuid1"),
    ("import uuid\n", f"{LENT} or uuid.getnode() == 0", "getnode"),
    ("from uuid import *\n", f"{LENT} or uuid4().version == 9", "import *"),
    ("import hashlib\n", f"{LENT} or hashlib.new('md4') is None", "hashlib.new"),
    ("import zlib\n", f"{LENT} or zlib.compress(b'x') == b''", "zlib.compress"),
    ("import urllib.request\n", f"{LENT} or urllib.request is None", "urllib.request"),
    ("from urllib import request\n", f"{LENT} or request is None", "urllib.request"),
    ("import struct\n", f"{LENT} or struct.calcsize('l') == 4", "import struct"),
    ("import pprint\n", f"{LENT} or pprint.pformat({{1: 2}}) == ''", "import pprint"),
    # a module as a value: any attribute named like another module may be one (A-F5 kept safe)
    ("import calendar\n", f"{LENT} or [calendar][0].sys is None", "sys"),
    ("import calendar\ndef mod(m):\n    return m.os\n", f"{LENT} or mod(calendar) is None", "os"),
    ("import collections\n", f"{LENT} or collections.abc.sys is None", "sys"),
    ("class C:\n    import calendar\n", f"{LENT} or C.calendar.sys is None", "sys"),  # an import as a class attribute
    ("import re._parser as p\n", f"{LENT} or p is None", "import re._parser"),
])
def test_a_check_reaching_past_the_allowed_modules_is_refused(runtime, head: str, body: str, named: str) -> None:
    head = head.replace("return True\n", "return True\n\n\ndef ok():\n    with S():\n        import numpy\n"
                                         "        return False\n    return True\n") if head == SWALLOW else head
    _refused(runtime, _check(body, head), named)


def test_checks_computing_with_the_modules_the_docs_allow_are_verified(runtime) -> None:
    """uuid's format check is what EnvScaler's own check prompt asks for ("correct type/format")."""
    _verified(runtime, _check(
        f"{LENT} and str(UUID('12345678-1234-5678-1234-567812345678')) != '' "
        "and uuid.uuid5(uuid.NAMESPACE_DNS, 'b1').version == 5 "
        "and difflib.SequenceMatcher(None, 'lent', 'lend').ratio() > 0.5 "
        "and urllib.parse.quote('a b') == 'a%20b' and hashlib.md5(b'b1').hexdigest()[:2] != '' "
        "and textwrap.shorten('a b c', 5) != '' and base64.b64encode(b'b1') == b'YjE=' "
        "and binascii.hexlify(b'b') == b'62' and zlib.crc32(b'b1') > 0 and html.escape('<') == '&lt;' "
        "and ipaddress.ip_address('10.0.0.1').is_private and keyword.iskeyword('def') "
        "and unicodedata.category('a') == 'Ll'",
        head="import uuid\nfrom uuid import UUID\nimport difflib\nimport urllib.parse\nimport hashlib\nimport textwrap\n"
             "import base64\nimport binascii\nimport zlib\nimport html\nimport ipaddress\nimport keyword\n"
             "import unicodedata\n"))


@pytest.mark.parametrize(("head", "body"), [
    ("import collections.abc\n", f"{LENT} and isinstance(final_state, collections.abc.Mapping)"),
    ("from collections import abc\n", f"{LENT} and isinstance(final_state, abc.Mapping)"),
    ("from __future__ import annotations\nimport collections.abc as cabc\n", f"{LENT} and isinstance(final_state, cabc.Mapping)"),
    ("from collections import namedtuple\nU = namedtuple('U', 'email code types os')\n",
     f"{LENT} and U('a@b', 'c', 't', 'o').email == 'a@b' and U(1, 2, 3, 4).os == 4 and U(1, 2, 3, 4).types == 3"),
    ("import json\nclass R:\n    def __init__(self):\n        self.os = 'linux'\n        self.queue = []\n",
     f"{LENT} and R().os == 'linux' and R().queue == [] and json.decoder.JSONDecoder is not None"),
])
def test_a_checks_own_fields_named_like_modules_and_allowed_submodules_are_verified(runtime, head: str, body: str) -> None:
    _verified(runtime, _check(body, head))


def test_the_refusal_names_the_breach_first_and_stays_whole(runtime) -> None:
    many = " or ".join(f"os.path.exists('/tmp/{i}')" for i in range(30))
    reason = _refused(runtime, _check(f"{LENT} or {many}", "import os\nimport sys\nimport socket\n"), "import os")
    reason = reason[reason.index("nondeterministic: "):]  # the check's own error, as the import's audit shows it
    assert reason.startswith("nondeterministic: the check names import os"), reason
    assert len(reason) <= 200 and reason.endswith("docs/scenarios_and_rollouts.md step 3)"), reason


def test_the_docs_list_every_module_a_check_may_import() -> None:
    text = DOCS.read_text()
    assert [m for m in sorted(PURE_MODULES) if f"`{m}`" not in text] == []


def test_an_unparsable_or_non_string_source_is_left_to_running_it() -> None:
    assert static_reason("def check_func(:") is None and static_reason(None) is None
