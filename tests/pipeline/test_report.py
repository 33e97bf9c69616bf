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
