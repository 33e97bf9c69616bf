"""Spec: import -> export --format envscaler -> import gives the same audit also for a scenario whose
supplied reference solution failed: the exported sidecar keeps that solution, so the re-import replays it
and gives the same reason ("the reference solution leaves a check False"). Before (differential round 3, F5)
the sidecar carried only solutions that verified, and the re-import said "no reference solution yet"."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from envscaler_core.export import export_run
from envscaler_core.models.interop import ImportedScenario
from envscaler_core.store import Store
from tests.interop.conftest import run_import, settings_for, write_scenarios_dir
from tests.interop.test_checks_on_records_the_task_creates import CREATED, ENV, PLAN

WRONG = [{"name": "reserve", "arguments": {"guest": "bo"}}]  # reserves R001 for bo: the check wants ana


def _audit(settings: Any, run_id: str) -> dict[str, tuple[str, list[str]]]:
    with Store.from_url(settings.store.url) as store:
        return {s.task_id: (s.audit, s.reasons) for s in store.query(ImportedScenario, run_id=run_id)}


def test_a_failed_supplied_solution_gives_the_same_audit_after_the_round_trip(tmp_path: Path, sandbox_pool: Any) -> None:
    scenarios = [{"env_id": "env_hotel", "env_class_name": "HotelDesk", "task_id": tid,
                  "init_config": {"hotel": {"reservations": {}}}, "task": f"Reserve a room for Ana ({tid}).",
                  "checklist": ["reserved"], "checklist_with_func": [{"check_item": "reserved", "check_func": CREATED}]}
                 for tid in ("solved", "failed", "none")]
    directory = write_scenarios_dir(tmp_path / "envscaler", "env_hotel", ENV, scenarios, {"solved": PLAN, "failed": WRONG})
    first = settings_for(tmp_path / "a")
    run_import(directory, first, sandbox_pool, run_id="a")
    with Store.from_url(first.store.url) as store:
        export_run(store, "a", first, tmp_path / "out", formats=["envscaler"])
    again = settings_for(tmp_path / "b")
    run_import(tmp_path / "out" / "a", again, sandbox_pool, run_id="b")
    before, after = _audit(first, "a"), _audit(again, "b")
    assert before["failed"] == ("unproven", ["the reference solution leaves a check False"])
    assert after == before
