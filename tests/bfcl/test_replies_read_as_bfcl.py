"""Spec: an evaluation reads each reply as BFCL's OpenAI FC handler does, whatever its `finish_reason`.
BFCL sends each request once and reads the first choice as it came: a closing text cut off by the
output limit (`length`), or an empty reply a content filter stopped, ends the turn and play goes on.
The factory's reply policy (ask a cut-off reply again with more room, refuse it or a filtered one as
unusable) made such tasks invalid where BFCL scores them valid, sent requests BFCL never sends, and
stored the task with nothing played (turns 0, no messages, usage 0/0). A task that does end early
(its prompt refused) keeps what was played. A real gateway over HTTP to a scripted endpoint, a real
sandbox episode."""

from __future__ import annotations

from typing import Any

import pytest

from sandbox import SandboxPool
from tests.bfcl.scripted_endpoint import TASK, endpoint_for  # noqa: F401 (a fixture)
from tests.bfcl.scripted_endpoint import evaluate_over as _evaluate

def test_a_closing_text_cut_off_by_the_output_limit_ends_the_turn(endpoint_for: Any, bfcl_pool: SandboxPool) -> None:
    endpoint = endpoint_for(lambda turn: ({"role": "assistant", "content": "I have moved th"}, "length"))
    result = _evaluate(endpoint, bfcl_pool)
    assert (result.valid, result.error_type, result.turns, result.steps) == (True, None, 2, 4)


def test_a_cut_off_reply_is_not_asked_again(endpoint_for: Any, bfcl_pool: SandboxPool) -> None:
    """BFCL sends each request once; before, each cut-off closing text was sent twice more with max_tokens."""
    endpoint = endpoint_for(lambda turn: ({"role": "assistant", "content": "I have moved th"}, "length"))
    _evaluate(endpoint, bfcl_pool)
    assert len(endpoint.bodies) == 4
    assert not any("max_tokens" in body or "max_completion_tokens" in body for body in endpoint.bodies)


def test_an_empty_reply_a_content_filter_stopped_ends_the_turn(endpoint_for: Any, bfcl_pool: SandboxPool) -> None:
    endpoint = endpoint_for(lambda turn: ({"role": "assistant", "content": None}, "content_filter") if turn == 1
                            else ({"role": "assistant", "content": "Done."}, "stop"))
    result = _evaluate(endpoint, bfcl_pool)
    assert (result.valid, result.error_type, result.turns, result.steps) == (True, None, 2, 4)


def test_a_task_whose_prompt_is_refused_keeps_what_was_played(endpoint_for: Any, bfcl_pool: SandboxPool) -> None:
    endpoint = endpoint_for(lambda turn: ({"role": "assistant", "content": "Done."}, "stop"), refuse_turn=1)
    result = _evaluate(endpoint, bfcl_pool)
    assert (result.valid, result.error_type) == (False, "multi_turn:inference_error")
    assert result.decoded == [[TASK.ground_truth[0]], []] and result.turns == 2 and result.steps == 2
    assert result.tool_calls == len(TASK.ground_truth[0])
    assert [m["role"] for m in result.messages] == ["user", "assistant", *["tool"] * len(TASK.ground_truth[0]),
                                                    "assistant", "user"]
    assert (result.usage.prompt_tokens, result.usage.completion_tokens) == (200, 14)


def test_a_closing_reply_that_finished_with_an_error_ends_the_turn(endpoint_for: Any, bfcl_pool: SandboxPool) -> None:
    """BFCL's handler reads a choice whose finish_reason is "error" like any other; the gateway took it
    for a failed generation, asked again until its retries ran out, and stopped the evaluation."""
    endpoint = endpoint_for(lambda turn: ({"role": "assistant", "content": "Done."}, "error"))
    result = _evaluate(endpoint, bfcl_pool)
    assert (result.valid, result.error_type, result.turns, result.steps) == (True, None, 2, 4)
    assert len(endpoint.bodies) == 4


INVALID_HISTORY = {"message": "Invalid 'messages[5].tool_calls': empty array. Expected an array with minimum "
                              "length 1, but got an empty array instead.", "type": "invalid_request_error",
                   "code": "empty_array"}


def test_a_history_the_endpoint_refuses_fails_that_task_only(endpoint_for: Any, bfcl_pool: SandboxPool) -> None:
    """The history goes back as the model sent it, and a strict server may refuse the model's own turns
    in it: BFCL's handler fails that task (`inference_error`) and goes on; the evaluation used to stop."""
    endpoint = endpoint_for(lambda turn: ({"role": "assistant", "content": "Done."}, "stop"), refuse_turn=1,
                            refusal=INVALID_HISTORY)
    result = _evaluate(endpoint, bfcl_pool)
    assert (result.valid, result.error_type, result.steps) == (False, "multi_turn:inference_error", 2)
    assert "empty array" in (result.error_message or "")


def test_a_first_request_the_endpoint_refuses_stops_the_evaluation(endpoint_for: Any, bfcl_pool: SandboxPool) -> None:
    """Refused before the model said anything, the request's form is ours (a wrong model name, a bad
    parameter): every task would meet it, so the evaluation stops and the task stays pending."""
    from envscaler_core.llm import LLMRequestRejected

    endpoint = endpoint_for(lambda turn: ({"role": "assistant", "content": "Done."}, "stop"), refuse_turn=0,
                            refusal=INVALID_HISTORY)
    with pytest.raises(LLMRequestRejected):
        _evaluate(endpoint, bfcl_pool)


def _closing(turn: int) -> tuple[dict[str, Any], str]:
    return {"role": "assistant", "content": "Done."}, "stop"


@pytest.mark.parametrize("listed", [
    pytest.param(lambda real: [{"index": 0, "message": {"role": "assistant", "content": ""}, "finish_reason": "stop"},
                               {**real, "index": 1}], id="an-empty-choice-first"),
    pytest.param(lambda real: [{"index": 1, "message": {"role": "assistant", "content": "I cannot help with that."},
                                "finish_reason": "stop"}, real], id="index-1-listed-first"),
])
def test_the_first_listed_choice_is_the_reply_as_bfcl_reads_choices_0(endpoint_for: Any, bfcl_pool: SandboxPool,
                                                                        listed: Any) -> None:
    """rt17-D F1: the factory's policy (by `index`, the first that says something) found the calls in the
    second choice and scored 1.0 where BFCL's handler, reading `choices[0]`, plays empty turns."""
    result = _evaluate(endpoint_for(_closing, choices=listed), bfcl_pool)
    assert (result.valid, result.tool_calls) == (False, 0)
    assert result.error_type == "multi_turn:empty_turn_model_response"
