"""Spec: live progress counts items per step and charges each step the LLM use that happened during it;
it is published atomically, and a failing sink never stops the run."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from envscaler_core.models.progress import RunProgress
from envscaler_core.pipeline.progress import ProgressTracker, Sink, file_sink, progress_path, read_progress
from envscaler_core.pipeline.progress_text import headline, progress_lines
from flows.progress import percent


class Ledger:
    def __init__(self) -> None:
        self.rows: dict[str, dict[str, Any]] = {}

    def spend(self, stage: str, calls: int, tokens: int, cost: float) -> None:
        row = self.rows.setdefault(stage, {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0, "cost_usd": 0.0})
        row["calls"] += calls
        row["prompt_tokens"] += tokens
        row["cost_usd"] += cost

    def __call__(self) -> dict[str, dict[str, Any]]:
        return {k: dict(v) for k, v in self.rows.items()}


def test_each_step_gets_the_llm_use_made_while_it_ran() -> None:
    ledger = Ledger()
    ledger.spend("mine", 5, 100, 0.5)  # spent before the run (a resumed run's earlier calls): not charged
    tracker = ProgressTracker("r", ledger)
    tracker.step_started("mine.judge", total=3)
    ledger.spend("mine", 3, 30, 0.3)
    tracker.batch_done(2, 1)
    tracker.step_started("synth", total=1)
    ledger.spend("synth", 2, 50, 1.0)
    final = tracker.finish("completed")
    judge, synth = final.steps
    assert (judge.done, judge.failed, judge.total, judge.llm_calls, judge.tokens) == (2, 1, 3, 3, 30)
    assert (synth.llm_calls, synth.tokens, synth.cost_usd) == (2, 50, 1.0)
    assert judge.finished_at is not None and synth.finished_at is not None
    assert (final.llm_calls, final.tokens, final.status) == (5, 80, "completed")
    assert "mine.judge 2/3 done, 1 failed · 3 LLM calls · 30 tokens" in progress_lines(final)[0]
    assert "completed" in headline(final)


def test_a_step_the_run_stopped_in_says_so_instead_of_reading_as_finished() -> None:
    tracker = ProgressTracker("r", Ledger())
    tracker.step_started("synth", total=2)
    tracker.batch_done(2, 0)
    tracker.step_started("validate", total=6)
    tracker.batch_done(3, 0)
    final = tracker.finish("interrupted")
    synth, validate = progress_lines(final)
    assert synth.startswith("  synth 2/2 done") and "(interrupted)" not in synth
    assert validate.startswith("  validate (interrupted) 3/6 done")


def test_the_progress_file_is_replaced_whole(tmp_path: Path) -> None:
    path = tmp_path / "p" / "r.json"
    tracker = ProgressTracker("r", Ledger(), sinks=[file_sink(path, interval_s=0)])
    stop = threading.Event()
    seen: list[RunProgress | None] = []

    def read() -> None:
        while not stop.is_set():
            if path.exists():
                seen.append(read_progress(path))

    reader = threading.Thread(target=read)
    reader.start()
    for i in range(200):
        tracker.step_started(f"s{i}", total=1)
    stop.set()
    reader.join()
    assert seen and all(p is not None for p in seen)  # never half a file
    assert read_progress(path).current.name == "s199"  # type: ignore[union-attr]


def test_a_broken_sink_is_switched_off_and_the_rest_go_on(tmp_path: Path) -> None:
    calls: list[str] = []

    def boom(_: RunProgress) -> None:
        calls.append("boom")
        raise OSError("disk full")

    path = tmp_path / "r.json"
    tracker = ProgressTracker("r", Ledger(), sinks=[Sink("boom", boom, 0), file_sink(path, 0)])
    tracker.step_started("a")
    tracker.step_started("b")
    assert calls == ["boom"] and read_progress(path).current.name == "b"  # type: ignore[union-attr]


def test_progress_lives_beside_a_duckdb_store(tmp_path: Path) -> None:
    assert progress_path(f"duckdb:///{tmp_path / 'x.duckdb'}", "r1") == tmp_path / "x.duckdb.progress" / "r1.json"
    assert progress_path("postgresql://u@h/db", "r1", tmp_path) == tmp_path / "progress" / "r1.json"


def test_percent_counts_finished_steps_and_the_current_one() -> None:
    tracker = ProgressTracker("r", Ledger())
    tracker.step_started("a", total=4)
    tracker.batch_done(2, 0)
    assert percent(tracker.snapshot(), ["a", "b"]) == 25.0
    tracker.step_started("b", total=1)
    assert percent(tracker.snapshot(), ["a", "b"]) == 50.0


def test_costs_against_the_mock_are_labelled_as_mock_in_every_line() -> None:
    """The mock's dollars are list prices of tokens nobody paid for; a real endpoint's are not labelled."""
    from envscaler.live_progress import progress_table
    from envscaler_core.pipeline.progress_text import step_line

    for mock in (True, False):
        ledger = Ledger()
        tracker = ProgressTracker("r", ledger, mock_llm=mock)
        tracker.step_started("mine.judge", total=2)
        ledger.spend("mine", 2, 40, 0.25)
        tracker.batch_done(2, 0)
        tracker.step_finished()
        snap = RunProgress.model_validate_json(tracker.snapshot().model_dump_json())  # as `status` reads it back
        label = " (mock)" if mock else ""
        assert headline(snap).endswith(f"$0.2500{label}")
        assert f"$0.2500{label} · " in step_line(snap.steps[0], snap.mock_llm)
        assert all(f"$0.2500{label} · " in line for line in progress_lines(snap))
        assert [c.header for c in progress_table(snap).columns][6] == ("cost (mock)" if mock else "cost")


def test_the_rollout_line_names_trajectories_and_scenarios() -> None:
    """Rollout is handed scenarios and plays several trajectories of each: `300/15 done` mixed the units."""
    from envscaler_core.pipeline.progress_text import step_line

    tracker = ProgressTracker("r", Ledger())
    tracker.step_started("rollout", total=15)
    tracker.batch_done(300, 0)
    tracker.step_finished()
    assert step_line(tracker.snapshot().steps[0]).startswith("rollout 300 trajectories of 15 scenarios done · ")
