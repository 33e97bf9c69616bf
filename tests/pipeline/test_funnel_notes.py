"""Spec: the note for a run that came out empty names what emptied it: the judge's verdicts, or, when no
task got a verdict at all, the judgements that failed (an outside check: every judgement failed on a
refused request and the note said no task was judged stateful, pointing at the tasks)."""

from __future__ import annotations

from envscaler_core.pipeline.funnel_notes import funnel_notes

EMPTY = {"source_tasks": 79, "stateful_tasks": 0, "topics": 0, "selected_topics": 0}


def test_verdicts_that_found_no_stateful_task_are_the_reason() -> None:
    [note] = funnel_notes(EMPTY, ["mine"], judged=79, judge_failed=0)
    assert "no source task was judged stateful" in note


def test_judgements_that_all_failed_are_the_reason_not_the_tasks() -> None:
    [note] = funnel_notes(EMPTY, ["mine"], judged=0, judge_failed=79)
    assert "the stateful judgement failed for all 79 source task(s)" in note
    assert "no source task was judged stateful" not in note and "see the failure reasons" in note


def test_some_verdicts_keep_the_verdict_note() -> None:
    [note] = funnel_notes(EMPTY, ["mine"], judged=3, judge_failed=76)
    assert "no source task was judged stateful" in note
