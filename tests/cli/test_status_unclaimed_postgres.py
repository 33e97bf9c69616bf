"""Spec: on PostgreSQL, `envscaler status` shows a run recorded as running that no process works on as
`interrupted`, with how to continue it.

An outside check stopped PostgreSQL under a run's two shard flow runs: both failed in Prefect, unable
to record their end, and `status` said `running` forever. A process working on a run holds its claim
(a session advisory lock, envscaler_core/store/claims.py) for as long as it works, and the server drops
it when the process or its connection ends; so a running row with no claim held outlived its
processes. A run whose claim is held (here by this test process) stays `running`. Runs this tree's CLI.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from envscaler_core.models import Run
from envscaler_core.store import Store
from envscaler_core.store.claims import claimed_run
from tests.cli.helpers import clean_env

pytestmark = [pytest.mark.postgres]

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def store(postgres_url: str) -> Iterator[Store]:
    opened = Store.from_url(postgres_url)
    try:
        for run_id in ("lost", "alive"):
            opened.save_run(Run(run_id=run_id, status="running", config={}, sources=[]))
        yield opened
    finally:
        opened.close()


def _status(url: str, tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "home").mkdir(exist_ok=True)
    env = clean_env(tmp_path / "home", PYTHONPATH=str(REPO))
    return subprocess.run([sys.executable, "-m", "envscaler.cli", "status", *args, "--db", url], capture_output=True,
                          text=True, env=env, cwd=tmp_path, timeout=120, stdin=subprocess.DEVNULL)


def test_the_list_shows_an_unclaimed_running_run_interrupted(store: Store, tmp_path: Path) -> None:
    with claimed_run(store, "alive", (0, 2)):
        out = _status(store.url, tmp_path, "--json")
    assert out.returncode == 0, out.stderr
    shown = {r["run_id"]: r["status"] for r in json.loads(out.stdout)}
    assert shown == {"lost": "interrupted", "alive": "running"}


def test_the_run_view_says_no_process_works_on_it_and_how_to_continue(store: Store, tmp_path: Path) -> None:
    out = _status(store.url, tmp_path, "lost")
    assert out.returncode == 0, out.stderr
    assert "interrupted" in out.stdout and "no process works on it" in out.stdout, out.stdout
    assert "resume lost" in out.stdout, out.stdout
