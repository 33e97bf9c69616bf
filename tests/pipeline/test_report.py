"""Spec: the run summary groups failure reasons by the fact, not by the judge's wording."""

from envscaler_core.pipeline.report import RunSummary, summary_markdown, summary_text, top_reasons


def test_reasons_group_on_their_first_clause() -> None:
    reasons = ["rejected env: contract: query tool get_item changed state | judge: the view counter moved",
               "rejected env: contract: query tool get_item changed state | judge: state changed on a read",
               "synth: state_space: invalid JSON"]
    assert top_reasons(reasons) == [("rejected env: contract: query tool get_item changed state", 2),
                                    ("synth: state_space: invalid JSON", 1)]


def test_summary_shows_funnel_tokens_and_retries() -> None:
    s = RunSummary(run_id="r", status="completed", funnel={"source_tasks": 3, "topics": 1},
                   usage={"mine": {"calls": 4, "cached": 1, "retries": 2, "prompt_tokens": 10,
                                   "completion_tokens": 5, "cost_usd": 0.5}})
    text = summary_text(s)
    assert "  source_tasks       3" in text
    assert "LLM calls 4 (1 cached, 2 retries), tokens 15, cost $0.5000" in text
    assert "| mine | 4 | 1 | 2 | 10 | 0 | 5 | 0.5000 |" in summary_markdown(s)  # prompt, of it prefix-cached, completion


REASON = ("rejected env: exception in return_item: KeyError: '__missing_id__'; query tool get_item changed state "
          "(the view counter moved); delete_item returned str, not a dict")


def test_a_long_failure_reason_is_cut_at_a_word_with_an_ellipsis() -> None:
    s = RunSummary(run_id="r", status="completed", funnel={}, top_failures=top_reasons([REASON]))
    line = next(line for line in summary_text(s).splitlines() if line.startswith("  failure x1: "))
    assert line == ("  failure x1: rejected env: exception in return_item: KeyError: '__missing_id__'; query tool "
                    "get_item changed…")
    assert len(line.removeprefix("  failure x1: ")) <= 100


def test_reasons_that_differ_past_the_cut_still_count_together() -> None:
    assert top_reasons([REASON, REASON.replace("delete_item", "remove_item")]) == [(top_reasons([REASON])[0][0], 2)]


def test_a_long_error_task_and_judge_reason_are_cut_at_a_word_too() -> None:
    from envscaler_core.pipeline.report import Judged, JudgedTask

    s = RunSummary(run_id="r", status="failed", funnel={"stateful_tasks": 0}, error="boom" + " word" * 100,
                   notes=["stateful tasks: 0 of 1"],
                   judged=Judged(not_stateful=1, not_stateful_examples=[JudgedTask(
                       task="what is " * 20, origin="a:1", reason="the task only asks for information " * 10)]))
    lines = summary_text(s).splitlines()
    error = next(line for line in lines if line.startswith("  error: "))
    assert error.endswith(" word word…") and len(error) <= len("  error: ") + 400
    assert "    - " + "what is " * 8 + "what…  (a:1)" in lines
    judge = next(line for line in lines if line.startswith("      judge: "))
    assert judge.endswith(" information the task…")
