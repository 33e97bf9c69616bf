"""Every jail reads local time in UTC, whatever the host's zone: a check such as
`datetime(2026, 1, 1).timestamp() == 1767225600` (a naive datetime read in local time) gives the same
verdict on every host. Before, bwrap's jail fell back to UTC only because it has no /etc/localtime, and
the rlimit backend read the host's zone file, so a verdict verified on one host could flip on another."""

from __future__ import annotations

import pytest

from envscaler_core.config import SandboxSettings
from sandbox import SandboxPool
from tests.sandbox.helpers import attack_code

LOCAL_TIME = attack_code("""
    import datetime, time
    return {'TZ': os.environ.get('TZ'), 'tzname': list(time.tzname),
            'new_year': datetime.datetime(2026, 1, 1).timestamp(),
            'offset': datetime.datetime(2026, 7, 1).astimezone().utcoffset().total_seconds()}
""")
UTC = {"TZ": "UTC", "tzname": ["UTC", "UTC"], "new_year": 1767225600.0, "offset": 0.0}


def _local_time(**settings: object) -> dict:
    with SandboxPool(SandboxSettings(workers=1, **settings)) as pool:
        with pool.open_episode(LOCAL_TIME, "Attack", None) as ep:
            out = ep.call("attack", {})
            assert out.ok, out
            return out.result


@pytest.mark.parametrize("settings", [{}, {"backend": "rlimit", "allow_weak": True}], ids=["bwrap", "rlimit"])
def test_local_time_in_the_jail_is_utc_whatever_the_host_zone(settings: dict, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "Asia/Tokyo")
    assert _local_time(**settings) == UTC
