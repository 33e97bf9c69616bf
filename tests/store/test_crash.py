"""A writer killed mid-batch leaves whole batches only, and the file opens again afterwards."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from envscaler_core.models import SourceTask
from envscaler_core.store import Store

BATCH = 1000

WRITER = textwrap.dedent(
    f"""
    import sys
    from envscaler_core.store import Store
    from tests.store.samples import source_task
    batches = [[source_task(b * {BATCH} + i) for i in range({BATCH})] for b in range(20)]  # built up front,
    store = Store.from_url(sys.argv[1])  # so the kill lands inside an upsert, not in record building
    for number, batch in enumerate(batches, 1):
        store.upsert(batch, run_id="r1")
        print("committed", number, flush=True)
    """
)


@pytest.mark.slow
def test_a_killed_writer_leaves_only_whole_batches(duckdb_url: str) -> None:
    root = Path(__file__).resolve().parents[2]
    child = subprocess.Popen(
        [sys.executable, "-c", WRITER, duckdb_url], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=root
    )
    try:
        assert child.stdout is not None
        for _ in range(2):  # kill while the third batch is being written
            line = child.stdout.readline()
            assert line.startswith("committed"), (line, child.stderr.read() if child.stderr else "")
        child.send_signal(signal.SIGKILL)
    finally:
        child.kill()
        child.wait(timeout=60)
    with Store.from_url(duckdb_url) as store:
        stored = len(store.fingerprints(SourceTask, "r1"))
    assert stored >= 2 * BATCH
    assert stored % BATCH == 0, stored
