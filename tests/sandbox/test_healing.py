"""Issue 10: the zygote is verified, not trusted. A zygote that hands out units other than the ones asked
for (here: its limits changed from outside, as the red team did through prlimit64) is replaced, and the
pool goes on serving; a load that crashes because of the env's own code does not cost the zygote."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from envscaler_core.runtime import EnvLoadError
from sandbox import SandboxPool
from tests.sandbox.helpers import LIBRARY, LIBRARY_STATE, benign_call_works


def address_space_limit(pid: int) -> str:
    return next(line for line in Path(f"/proc/{pid}/limits").read_text().splitlines()
                if line.startswith("Max address space"))


def test_a_zygote_whose_limits_were_lowered_from_outside_is_replaced(fresh: SandboxPool) -> None:
    zygote = fresh.zygotes[0]
    old_pid = zygote.host_pid
    uid = Path(f"/proc/{old_pid}/status").read_text().split("Uid:")[1].split()[0]
    if os.geteuid() not in (0, int(uid)):
        pytest.skip("lowering the zygote's limits takes a process of its uid, which we cannot start here")
    # What the red team did from inside an episode: prlimit64 on the zygote, from a process of its uid.
    lower = f"import resource; resource.prlimit({old_pid}, resource.RLIMIT_AS, ({64 << 20}, {64 << 20}))"
    subprocess.run(["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "/usr/bin/python3", "-c", lower],
                   check=True, timeout=30)
    assert str(64 << 20) in address_space_limit(old_pid)
    for _ in range(3):  # the unit made in advance still has good limits; the next ones cannot get them
        with fresh.open_episode(LIBRARY, "Library", LIBRARY_STATE) as ep:
            assert ep.call("get_book", {"book_id": "b1"}).ok
    assert zygote.restarts >= 1 and zygote.host_pid != old_pid
    assert str(64 << 20) not in address_space_limit(zygote.host_pid)


def test_a_zygote_whose_units_fail_verification_is_replaced(fresh: SandboxPool) -> None:
    zygote = fresh.zygotes[0]
    fresh.limits.nofile = 48  # the host now expects other limits than the running zygote applies
    with fresh.open_episode(LIBRARY, "Library", LIBRARY_STATE) as ep:  # the unit made in advance fails, a new zygote serves
        assert ep.call("get_book", {"book_id": "b1"}).ok
        assert "Max open files            48                   48" in Path(f"/proc/{ep.host_pid}/limits").read_text()
    assert zygote.restarts == 1


def test_a_load_that_crashes_by_itself_keeps_the_zygote(fresh: SandboxPool) -> None:
    zygote = fresh.zygotes[0]
    pid = zygote.host_pid
    code = "import os\nclass A:\n    def __init__(self, init_config=None):\n        os._exit(3)\n"
    with pytest.raises(EnvLoadError, match="exited with status 3"):
        fresh.open_episode(code, "A", {})
    assert zygote.restarts == 0 and zygote.host_pid == pid
    assert benign_call_works(fresh)


def test_a_zygote_killed_between_episodes_is_restarted_with_a_health_check(fresh: SandboxPool) -> None:
    zygote = fresh.zygotes[0]
    os.kill(zygote.host_pid, 9)
    zygote.proc.wait(timeout=5)
    assert benign_call_works(fresh)
    assert zygote.restarts == 1


SHELF = '''
class Shelf:
    def __init__(self, init_config: dict = None):
        self.books = dict((init_config or {}).get("books", {}))

    def lend(self, book_id: str) -> dict:
        if book_id not in self.books:
            return {"success": False, "error": "no such book"}
        self.books[book_id] = dict(self.books[book_id], status="lent")
        return {"success": True}

    def get_book(self, book_id: str) -> dict:
        return {"success": book_id in self.books, "data": self.books.get(book_id)}
'''


def test_an_episode_whose_jail_is_replaced_meanwhile_goes_on_from_its_state(fresh: SandboxPool) -> None:
    """Replacing a zygote kills its jail's units, live episodes included: that is no verdict on the env's
    code, so the episode's next call runs again in a new unit from the state it had (flaked in CI as a
    'crash' of a healthy class when the ready-unit keeper replaced a zygote mid-episode)."""
    with fresh.open_episode(SHELF, "Shelf", LIBRARY_STATE) as ep:
        assert ep.call("lend", {"book_id": "b1"}).ok
        zygote = fresh.zygotes[0]
        zygote.replace(zygote.generation, "replaced by the spec")
        out = ep.call("get_book", {"book_id": "b1"})
        assert out.ok and out.result["data"]["status"] == "lent", out
        assert ep.restarts == 1


def test_a_unit_that_dies_by_its_own_code_is_still_a_crash(fresh: SandboxPool) -> None:
    code = "import os\nclass A:\n    def __init__(self, init_config=None):\n        pass\n    def die(self) -> dict:\n        os._exit(3)\n"
    with fresh.open_episode(code, "A", {}) as ep:
        out = ep.call("die", {})
        assert not out.ok and out.error_kind == "crash"
