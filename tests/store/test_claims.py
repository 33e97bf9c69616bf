"""Spec: one live process works on a run at a time on a PostgreSQL store, or one per shard of it.

The claim of another process is held by a real second Python process (`_Holder`) on the session
PostgreSQL: a second whole run is refused naming that process (pid and host) and how to shard; shards
with distinct indexes run side by side; a shard index taken twice, or a whole run beside shards, is
refused; a claim ends with its process, even one killed outright (no heartbeat to wait out)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from envscaler_core.store import Store
from envscaler_core.store.claims import RunHeld, claimed_run, live_shards

pytestmark = [pytest.mark.postgres]
ROOT = Path(__file__).resolve().parents[2]

HOLD = """
import sys
from envscaler_core.store import Store
from envscaler_core.store.claims import claimed_run
url, run_id, index, count = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
with Store.from_url(url) as store, claimed_run(store, run_id, (index, count)):
    print("held", flush=True)
    sys.stdin.read()
"""


class _Holder:
    """Another process holding a claim until it is told to stop (stdin closed) or killed."""

    def __init__(self, url: str, run_id: str, shard: tuple[int, int] = (0, 1)) -> None:
        self.proc = subprocess.Popen([sys.executable, "-c", HOLD, url, run_id, str(shard[0]), str(shard[1])],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                     cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
        line = self.proc.stdout.readline() if self.proc.stdout else ""
        assert line.strip() == "held", self.proc.communicate(timeout=30)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.communicate("", timeout=30)

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=30)


@pytest.fixture
def holders() -> Iterator[list[_Holder]]:
    made: list[_Holder] = []
    yield made
    for holder in made:
        if holder.proc.poll() is None:
            holder.kill()


@pytest.fixture
def store(postgres_url: str) -> Iterator[Store]:
    with Store.from_url(postgres_url) as opened:
        yield opened


def test_a_second_whole_run_is_refused_naming_the_owner_and_how_to_shard(store: Store, postgres_url: str,
                                                                         holders: list[_Holder]) -> None:
    holders.append(_Holder(postgres_url, "pgdup"))
    with pytest.raises(RunHeld) as refused, claimed_run(store, "pgdup"):
        pass
    message = str(refused.value)
    assert f"envscaler pid {holders[0].proc.pid} on {socket.gethostname()[:8]}" in message
    assert "run pgdup is already being worked on" in message and "shard_index" in message


def test_another_run_id_is_not_held(store: Store, postgres_url: str, holders: list[_Holder]) -> None:
    holders.append(_Holder(postgres_url, "pgdup"))
    with claimed_run(store, "another"):
        pass


def test_shards_with_distinct_indexes_run_side_by_side(store: Store, postgres_url: str, holders: list[_Holder]) -> None:
    holders.append(_Holder(postgres_url, "big", (0, 2)))
    with claimed_run(store, "big", (1, 2)):
        assert live_shards(store, "big", (1, 2)) == [f"envscaler pid {holders[0].proc.pid} on "
                                                     f"{socket.gethostname()}"[:63 - len(", shard 0 of 2")] + ", shard 0 of 2"]


def test_a_shard_index_taken_twice_is_refused(store: Store, postgres_url: str, holders: list[_Holder]) -> None:
    holders.append(_Holder(postgres_url, "big", (1, 2)))
    with pytest.raises(RunHeld, match="shard 1 of 2 cannot start"), claimed_run(store, "big", (1, 2)):
        pass


@pytest.mark.parametrize("first, second", [((0, 1), (0, 2)), ((0, 2), (0, 1))], ids=["shard-beside-run", "run-beside-shard"])
def test_a_whole_run_and_a_shard_do_not_run_together(store: Store, postgres_url: str, holders: list[_Holder],
                                                     first: tuple[int, int], second: tuple[int, int]) -> None:
    holders.append(_Holder(postgres_url, "big", first))
    with pytest.raises(RunHeld), claimed_run(store, "big", second):
        pass


def test_the_claim_ends_with_its_process_even_when_killed(store: Store, postgres_url: str, holders: list[_Holder]) -> None:
    holder = _Holder(postgres_url, "pgdup")
    holder.kill()
    with claimed_run(store, "pgdup"):
        pass
    polite = _Holder(postgres_url, "pgdup")
    polite.stop()
    with claimed_run(store, "pgdup"):
        pass


def test_this_process_takes_its_own_claim_again(store: Store, postgres_url: str) -> None:
    """The CLI claims the run, then the flow it runs in the same process claims it again."""
    with Store.from_url(postgres_url) as other, claimed_run(store, "mine"), claimed_run(other, "mine"):
        pass
