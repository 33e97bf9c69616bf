"""Spec: a check is a function of the state, by a rule a reader can state in one line: it imports only
modules that compute (`re`, `json`, `datetime`, ...; from `time` only `strptime`), and names no clock
(`now`/`today`/`utcnow` on anything), no reflection, I/O or address builtin, no `_` attribute or dunder,
and no module reached through another's attribute. The denylist it replaces was walked around by every
outside check (rt10-A F1/F4/F6, rt10-B F5, rt10-C F3): `time.strftime('%s')`, `__import__('time')`,
`email.utils.formatdate()`, `os.stat('/proc/self')`, `D.now()` through an alias, `os.cpu_count()` were
verified, then paid do-nothing episodes 1.0 once a date passed or on another host."""

from __future__ import annotations

import pytest

from envscaler_core.models.scenario import CheckSpec
from envscaler_core.scenarios import verify_scenario
from tests.scenarios.helpers import LENT_B1, library_env, scenario

TIMEOUT = 2.0
LENT = "final_state['books']['b1']['status'] == 'lent'"


def _check(body: str, head: str = "", lines: str = "") -> CheckSpec:
    return CheckSpec(item="b1 is lent", code=f"{head}def check_func(final_state):\n{lines}    return {body}\n")


@pytest.mark.parametrize(("head", "lines", "body", "named"), [
    ("import time\n", "", f"{LENT} or int(time.strftime('%s')) > 4102444800", "time"),
    ("", "", f"{LENT} or __import__('time').time() > 4102444800", "__import__"),
    ("import email.utils\n", "", f"{LENT} or email.utils.formatdate() > 'Z'", "email.utils"),
    ("import os\n", "", f"{LENT} or os.stat('/proc/self').st_ctime > 4102444800", "import os"),
    ("from datetime import datetime as D\n", "", f"{LENT} or D.now().year > 2100", "D.now"),
    ("from datetime import date as day\n", "", f"{LENT} or day.today().year > 2100", "day.today"),
    ("import datetime\n", "    cls = datetime.datetime\n", f"{LENT} or cls.now().year > 2100", "cls.now"),
    ("import os\n", "", f"{LENT} or os.cpu_count() > 4096", "import os"),
    ("", "", f"{LENT} and repr(object())[-2] != 'z'", "object()"),
    ("import statistics\n", "", f"{LENT} and statistics.random.random() < 2", "statistics.random"),
    ("import operator, datetime\n", "", f"{LENT} or operator.attrgetter('n' + 'ow')(datetime.datetime)().year > 2100",
     "attrgetter"),
    ("", "", f"{LENT} or getattr(final_state, 'get') is None", "getattr"),
    ("import time as t\n", "    clock = t\n", f"{LENT} or clock.time() > 4102444800", "time"),
    ("import jail_unit\n", "", f"{LENT} or jail_unit is None", "import jail_unit"),  # the sandbox's own module
])
def test_a_check_reaching_past_the_state_is_refused_as_nondeterministic(
        runtime, head: str, lines: str, body: str, named: str) -> None:
    report = verify_scenario(scenario([_check(body, head, lines)]), library_env(), runtime, TIMEOUT)
    assert not report.ok and report.failure == "nondeterministic", report.reason
    assert report.checks[0].problem == "nondeterministic"
    assert named in (report.reason or ""), report.reason


def test_the_refusal_names_the_breach_and_where_the_rule_is_so_a_repair_can_follow_it(runtime) -> None:
    report = verify_scenario(scenario([_check(f"{LENT} or os.cpu_count() > 4096", "import os\n")]),
                             library_env(), runtime, TIMEOUT)
    assert "import os (not a module a check may import)" in (report.reason or ""), report.reason
    assert "docs/scenarios_and_rollouts.md step 3" in (report.reason or ""), report.reason


def test_an_envscaler_style_check_computing_on_the_state_is_still_verified(runtime) -> None:
    computing = _check(
        f"{LENT} and now.year == 2026 and time.strptime('2026', '%Y').tm_year == now.time().hour + 2026 "
        "and json.dumps(sorted(final_state)) != '' and re.match(r'b\\d', 'b1') is not None "
        "and math.isclose(Decimal('0.1') * 3, 0.3) and _seen == set()",
        head="import json\nimport math\nimport re\nimport time\nfrom datetime import datetime\nfrom decimal import Decimal\n",
        lines="    now = datetime.strptime('2026-01-02', '%Y-%m-%d')\n    _seen = set()\n    today = now.date()\n")
    report = verify_scenario(scenario([LENT_B1, computing]), library_env(), runtime, TIMEOUT)
    assert report.ok, report.reason
