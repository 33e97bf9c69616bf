"""A run's hold on its store, and what `status` sees of it before the flow publishes any progress.

The run opens the store once, in this process, for its whole life: a DuckDB file another *run* holds
fails here in one line, before anything is recorded. A read-only verb (`status`, `report`, ...) holds the
file only for the moment it reads; if it is holding it just when a run starts, the run waits for it
(up to `CLAIM_WAIT_S`) instead of failing: a look must never stop a run.

Right after the claim the run publishes a `starting` progress file (the Prefect API may take a while to
come up), so `status` during those seconds shows the run instead of "already open in another process"."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from envscaler.commands._common import fail
from envscaler_core.config import Settings, envscaler_data_dir

CLAIM_WAIT_S = 15.0
"""A reader's hold is usually a fraction of a second. The wait is silent: a failure after it must stay one
line (`error: ... (waited 15 s for it)`)."""


@contextlib.contextmanager
def claimed_store(settings: Settings, run_id: str | None = None) -> Iterator[Any]:
    """The store, opened for writing, and with `run_id` the run claimed in it (`envscaler_core.store.claims`):
    a run another live process works on is refused in one line naming that process and how to shard
    instead, on PostgreSQL (where both used to run it whole, paying twice) as on DuckDB (where the second
    process used to wait 15 s, taking the run for a reader, then name only the file's lock)."""
    from envscaler.status import held_by_the_run, is_locked, published_progress
    from envscaler_core.store import Store, StoreError
    from envscaler_core.store.claims import RunHeld, claimed_run

    started = time.monotonic()
    while True:
        try:
            store = Store.from_url(settings.store.url)
            break
        except StoreError as exc:
            active = published_progress(settings.store.url)
            if (held := held_by_the_run(settings.store.url, exc, run_id)) is not None:
                fail(held)
            held_by_run = any(p.run_id != run_id for p in active)
            waited = time.monotonic() - started
            if not is_locked(exc) or held_by_run:
                fail(str(exc))
            if waited >= CLAIM_WAIT_S:
                fail(f"{exc} (waited {waited:.0f} s for it)")
            time.sleep(0.3)
    try:
        with contextlib.ExitStack() as claims:
            if run_id is not None:
                try:
                    claims.enter_context(claimed_run(store, run_id))
                except RunHeld as exc:
                    fail(str(exc))
            yield store
    finally:
        store.close()


def publish_starting(settings: Settings, run_id: str) -> Path:
    """Write the run's progress file in its `starting` state and return its path (the flow takes it over)."""
    import os

    from envscaler_core.models.progress import RunProgress
    from envscaler_core.pipeline.progress import progress_path, write_text_atomic
    from envscaler_core.store.urls import human_store

    path = progress_path(settings.store.url, run_id, envscaler_data_dir())
    starting = RunProgress(run_id=run_id, pid=os.getpid(), store=human_store(settings.store.url), status="starting",
                           note="connecting to a Prefect API")
    with contextlib.suppress(OSError):
        write_text_atomic(path, starting.model_dump_json())
    return path
