"""judge_tasks / infer_topics: order kept, failures returned with their reason, never dropped, several
tasks per request, and a task a batch answer leaves out asked again on its own.

The LLM boundary is a scripted gateway keyed by task text (a batch request is answered item by item,
leaving out the tasks scripted as missing from batches); the real-mock run is tests/synth/test_e2e.py.
"""

from __future__ import annotations

import asyncio
from typing import Any

from envscaler_core.llm.errors import LLMOutputInvalid
from envscaler_core.mine import infer_topics, judge_tasks
from envscaler_core.models.source import SourceTask
from envscaler_core.prompts.mine import TaskBatchInput


class ScriptedGateway:
    def __init__(self, replies: dict[str, dict[str, Any] | Exception], left_out: set[str] = frozenset(),
                 batch_error: Exception | None = None) -> None:
        self.replies, self.left_out, self.batch_error = replies, left_out, batch_error
        self.asked: list[tuple[str, list[str]]] = []

    async def structured(self, prompt: Any, inp: Any, *, stage: str, **kw: Any) -> Any:
        if isinstance(inp, TaskBatchInput):
            self.asked.append((prompt.id, [t.task for t in inp.tasks]))
            if self.batch_error is not None:
                raise self.batch_error
            field = next(iter(prompt.output_model.model_fields))
            items = [{"id": t.id, **self.replies[t.task]} for t in inp.tasks
                     if t.task not in self.left_out and not isinstance(self.replies[t.task], Exception)]
            return prompt.output_model.model_validate({field: items})
        self.asked.append((prompt.id, [inp.task]))
        reply = self.replies[inp.task]
        if isinstance(reply, Exception):
            raise reply
        await asyncio.sleep(0.001 * len(inp.task) % 3)  # finish out of order
        return prompt.output_model.model_validate(reply)


def task(text: str) -> SourceTask:
    return SourceTask(text=text, dataset="jsonl", origin=f"t.jsonl:{len(text)}")


def test_judge_sets_stateful_and_reason_in_input_order() -> None:
    gw = ScriptedGateway({"Cancel order 4": {"analysis": "orders", "stateful": True},
                          "Tell a joke": {"analysis": "chit-chat", "stateful": False}})
    out = asyncio.run(judge_tasks([task("Cancel order 4"), task("Tell a joke")], gw, concurrency=1))
    assert [(t.text, t.stateful, t.judge_reason) for t in out] == [
        ("Cancel order 4", True, "orders"), ("Tell a joke", False, "chit-chat")]


def invalid(reason: str) -> LLMOutputInvalid:
    exc = LLMOutputInvalid.__new__(LLMOutputInvalid)
    Exception.__init__(exc, reason)
    exc.reason = reason
    return exc


JUDGED = {f"Cancel order {i}": {"analysis": f"orders {i}", "stateful": True} for i in range(7)}


def test_tasks_are_judged_several_per_request() -> None:
    gw = ScriptedGateway(JUDGED)
    out = asyncio.run(judge_tasks([task(t) for t in JUDGED], gw, batch=3))
    assert [a[0] for a in gw.asked] == ["mine.judge_stateful_batch"] * 2 + ["mine.judge_stateful"]
    assert [len(a[1]) for a in gw.asked] == [3, 3, 1]
    assert [(t.text, t.judge_reason) for t in out] == [(t, r["analysis"]) for t, r in JUDGED.items()]


def test_a_task_the_batch_answer_leaves_out_is_asked_again_on_its_own() -> None:
    gw = ScriptedGateway(JUDGED, left_out={"Cancel order 1"})
    out = asyncio.run(judge_tasks([task(t) for t in JUDGED], gw, batch=3))
    assert ("mine.judge_stateful", ["Cancel order 1"]) in gw.asked
    assert all(t.stateful is True for t in out) and out[1].judge_reason == "orders 1"


def test_an_invalid_batch_answer_falls_back_to_one_request_per_task() -> None:
    gw = ScriptedGateway(JUDGED, batch_error=invalid("not json"))
    out = asyncio.run(judge_tasks([task(t) for t in JUDGED], gw, batch=4))
    assert sorted(a[1][0] for a in gw.asked if a[0] == "mine.judge_stateful") == sorted(JUDGED)
    assert [t.judge_reason for t in out] == [r["analysis"] for r in JUDGED.values()]


def test_topics_are_inferred_several_per_request_in_input_order() -> None:
    replies = {f"Cancel order {i}": {"analysis": "a", "summary": f"Desk {i}", "introduction": "Orders.",
                                      "usefulness": 8, "modelability": 9} for i in range(5)}
    gw = ScriptedGateway(replies, left_out={"Cancel order 3"})
    out = asyncio.run(infer_topics([task(t) for t in replies], gw, batch=5))
    assert [r.topic.summary for r in out] == [f"Desk {i}" for i in range(5)]
    assert gw.asked[0][0] == "mine.infer_topic_batch" and gw.asked[1] == ("mine.infer_topic", ["Cancel order 3"])


def test_judgement_that_stays_invalid_returns_the_task_unjudged_with_reason() -> None:
    exc = invalid("bad json")
    out = asyncio.run(judge_tasks([task("Cancel order 4")], ScriptedGateway({"Cancel order 4": exc})))
    assert out[0].stateful is None and "bad json" in out[0].judge_reason


def test_infer_topics_builds_env_topics_linked_to_their_task() -> None:
    reply = {"analysis": "a", "summary": " Order desk ", "introduction": "Orders.", "usefulness": 8, "modelability": 9}
    source = task("Cancel order 4")
    result = asyncio.run(infer_topics([source], ScriptedGateway({"Cancel order 4": reply})))[0]
    assert result.failure is None and result.task_fp == source.fingerprint
    assert (result.topic.summary, result.topic.example_task, result.topic.source_task_fp) == (
        "Order desk", "Cancel order 4", source.fingerprint)
