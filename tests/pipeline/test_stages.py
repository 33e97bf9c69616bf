"""Spec: what the stages consider pending and done, read from a real DuckDB store."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from envscaler_core.config import Settings
from envscaler_core.models import EnvCandidate, EnvTopic, Run, SourceTask, StageFailure
from envscaler_core.pipeline import RunContext
from envscaler_core.pipeline import stages as S
from envscaler_core.store import Store

CODE = "class Env:\n    def __init__(self, init_config: dict = None):\n        self.x = 1\n"


@pytest.fixture
def ctx(tmp_path: Path):
    store = Store.from_url(f"duckdb:///{tmp_path / 's.duckdb'}")
    store.save_run(Run(run_id="r"))
    yield RunContext(run_id="r", settings=Settings(), store=store, gateway=None, runtime=None)  # type: ignore[arg-type]
    store.close()


def topic(task_fp: str, summary: str = "Clinic scheduler") -> EnvTopic:
    return EnvTopic(summary=summary, introduction="Books visits.", usefulness=8, modelability=8,
                    example_task="book a visit", source_task_fp=task_fp, selected=True)


def test_two_tasks_with_the_same_topic_text_are_two_topics() -> None:
    assert topic("a").fingerprint != topic("b").fingerprint


def test_identical_code_from_two_topics_is_validated_once(ctx: RunContext) -> None:
    a, b = (EnvCandidate(topic_fp=t, class_name="Env", class_code=CODE) for t in ("t1", "t2"))
    ctx.store.upsert([a, b], "r")
    report = S.mark_duplicates(ctx)
    assert report.done == 1
    keep, dup = sorted([a, b], key=lambda c: c.fingerprint)
    assert S.pending_validate(ctx) == [keep.fingerprint]
    marked = ctx.store.get(EnvCandidate, dup.fingerprint, "r")
    assert marked.status == "duplicate" and keep.fingerprint[:12] in marked.failure_reason
    assert S.mark_duplicates(ctx).done == 0  # re-running the step changes nothing


def test_topic_is_pending_until_it_has_a_candidate(ctx: RunContext) -> None:
    t = topic("a")
    ctx.store.upsert([t], "r")
    assert S.pending_synth(ctx) == [t.fingerprint]
    ctx.store.upsert([EnvCandidate(topic_fp=t.fingerprint, class_name="Env", class_code=CODE)], "r")
    assert S.pending_synth(ctx) == []


def test_item_is_given_up_after_max_attempts(ctx: RunContext) -> None:
    t = topic("a")
    ctx.store.upsert([t, StageFailure(stage="synth", item_fp=t.fingerprint, attempts=2, reason="boom")], "r")
    assert S.pending_synth(ctx) == [t.fingerprint]  # 2 < 3: retried on resume
    ctx.store.upsert([StageFailure(stage="synth", item_fp=t.fingerprint, attempts=3, reason="boom")], "r")
    assert S.pending_synth(ctx) == []  # given up, reason kept
    assert ctx.store.query(StageFailure, run_id="r")[0].reason == "boom"


def test_a_candidate_already_validated_stays_the_keeper(ctx: RunContext) -> None:
    a, b = sorted((EnvCandidate(topic_fp=t, class_name="Env", class_code=CODE) for t in ("t1", "t2")),
                  key=lambda c: c.fingerprint)
    # another shard validated the larger fingerprint before this one synthesized the smaller
    ctx.store.upsert([a, b.model_copy(update={"status": "accepted"})], "r")
    S.mark_duplicates(ctx)
    assert ctx.store.get(EnvCandidate, a.fingerprint, "r").status == "duplicate"
    assert ctx.store.get(EnvCandidate, b.fingerprint, "r").status == "accepted"


def _three(ctx: RunContext) -> list[EnvCandidate]:
    cands = sorted((EnvCandidate(topic_fp=t, class_name="Env", class_code=CODE) for t in ("t1", "t2", "t3")),
                   key=lambda c: c.fingerprint)
    ctx.store.upsert(cands, "r")
    return cands


def statuses(ctx: RunContext, cands: list[EnvCandidate]) -> list[str]:
    return [ctx.store.get(EnvCandidate, c.fingerprint, "r").status for c in cands]


def test_a_resumed_stream_keeps_the_keeper_its_killed_run_was_validating(ctx: RunContext) -> None:
    """The killed run took the largest fingerprint first and marked the others duplicates of it; the
    resume's stream has taken nothing yet, and must still keep it (a red team lost an env here)."""
    small, middle, large = _three(ctx)
    S.mark_duplicates(ctx, frozenset({large.fingerprint}))
    assert statuses(ctx, [small, middle, large]) == ["duplicate", "duplicate", "generated"]
    S.mark_duplicates(ctx)  # the resume's first look
    assert S.pending_validate(ctx) == [large.fingerprint]


def test_a_candidate_being_validated_is_never_marked_duplicate(ctx: RunContext) -> None:
    small, middle, large = _three(ctx)
    S.mark_duplicates(ctx, frozenset({large.fingerprint, middle.fingerprint}))
    assert statuses(ctx, [small, middle, large]) == ["duplicate", "generated", "generated"]


def test_a_group_left_with_only_duplicates_gets_its_keeper_back(ctx: RunContext) -> None:
    small, middle, large = _three(ctx)
    ctx.store.upsert([c.model_copy(update={"status": "duplicate", "failure_reason": "same code as candidate x"})
                      for c in (small, middle, large)], "r")  # what the old rule could leave behind
    S.mark_duplicates(ctx)
    assert S.pending_validate(ctx) == [small.fingerprint]
    assert ctx.store.get(EnvCandidate, small.fingerprint, "r").failure_reason is None


def _source(path: Path, n: int) -> Path:
    import json

    path.write_text("\n".join(json.dumps({"task": f"Book a visit for patient {i} at the clinic on day {i}."})
                              for i in range(n)) + "\n")
    return path


def test_ingesting_the_same_source_again_adds_nothing(ctx: RunContext, tmp_path: Path) -> None:
    source = _source(tmp_path / "tasks.jsonl", 4)
    first = S.ingest(ctx, [source])
    again = S.ingest(ctx, [source])
    assert first.done == again.done == 4
    assert ctx.store.get_run("r").sources_report.files[0].sha256


def test_a_source_whose_contents_changed_under_the_same_path_stops_the_ingest(ctx: RunContext, tmp_path: Path) -> None:
    from envscaler_core.models import SourceTask

    source = _source(tmp_path / "tasks.jsonl", 4)
    S.ingest(ctx, [source])
    _source(source, 6)  # the same path, two more records: a resume must not mix both datasets into one run
    with pytest.raises(S.SourceError, match=r"tasks.jsonl changed since this run first read it \(4 records.*now 6"):
        S.ingest(ctx, [source])
    assert len(ctx.store.query(SourceTask, run_id="r")) == 4, "nothing of the new contents was stored"
    assert ctx.store.get_run("r").sources_report.files[0].records == 4, "the run's report still describes what it read"


def test_a_file_added_later_does_not_erase_the_first_files_digest(ctx: RunContext, tmp_path: Path) -> None:
    """`run --add-sources` ingests only the new file: the report keeps the first one's digest, so a later
    change to that file is still caught (an outside check mixed two datasets this way)."""
    first = _source(tmp_path / "first.jsonl", 4)
    S.ingest(ctx, [first])
    (tmp_path / "added.jsonl").write_text(json.dumps({"task": "Rent a bike for two days at the harbour shop."}) + "\n")
    S.ingest(ctx, [tmp_path / "added.jsonl"])
    assert [Path(f.path).name for f in ctx.store.get_run("r").sources_report.files] == ["first.jsonl", "added.jsonl"]
    _source(first, 6)
    with pytest.raises(S.SourceError, match="first.jsonl changed since this run first read it"):
        S.ingest(ctx, [first, tmp_path / "added.jsonl"])


def test_a_file_added_later_counts_the_runs_tasks_as_duplicates(ctx: RunContext, tmp_path: Path) -> None:
    """Duplicates are counted across all of a run's files, first seen wins, also for a file added later:
    read alone, the added copy of the run's tasks was reported "4 kept, 0 duplicate"."""
    first = _source(tmp_path / "first.jsonl", 4)
    S.ingest(ctx, [first])
    added = tmp_path / "added.jsonl"
    added.write_text(first.read_text() + json.dumps({"task": "A brand new task about renting a bike for two days."}) + "\n")
    S.ingest(ctx, [added])
    entry = {Path(f.path).name: f for f in ctx.store.get_run("r").sources_report.files}["added.jsonl"]
    assert (entry.records, entry.kept, entry.duplicates) == (5, 1, 4)
    assert len(ctx.store.query(SourceTask, run_id="r")) == 5


def test_a_source_moved_away_stops_the_ingest_naming_it(ctx: RunContext, tmp_path: Path) -> None:
    source = _source(tmp_path / "tasks.jsonl", 4)
    S.ingest(ctx, [source])
    source.rename(tmp_path / "renamed.jsonl")
    with pytest.raises(S.SourceError, match=r"source file\(s\) not found: .*tasks.jsonl .*put the file back"):
        S.ingest(ctx, [source])
