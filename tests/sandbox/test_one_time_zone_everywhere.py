"""Every jail reads local time in UTC, whatever the host's zone: a check such as
`datetime(2026, 1, 1).timestamp() == 1767225600` (a naive datetime read in local time) gives the same
verdict on every host. Before, bwrap's jail fell back to UTC only because it has no /etc/localtime, and
the rlimit backend read the host's zone file, so a verdict verified on one host could flip on another."""

from __future__ import annotations

import pytest

from tests.sandbox.helpers import attack_code, attack_in_a_fresh_pool

LOCAL_TIME = attack_code("""
    import datetime, time
    return {'TZ': os.environ.get('TZ'), 'tzname': list(time.tzname),
            'new_year': datetime.datetime(2026, 1, 1).timestamp(),
            'offset': datetime.datetime(2026, 7, 1).astimezone().utcoffset().total_seconds()}
""")
UTC = {"TZ": "UTC", "tzname": ["UTC", "UTC"], "new_year": 1767225600.0, "offset": 0.0}


@pytest.mark.parametrize("settings", [{}, {"backend": "rlimit", "allow_weak": True}], ids=["bwrap", "rlimit"])
def test_local_time_in_the_jail_is_utc_whatever_the_host_zone(settings: dict, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "Asia/Tokyo")
    assert attack_in_a_fresh_pool(LOCAL_TIME, **settings) == UTC
