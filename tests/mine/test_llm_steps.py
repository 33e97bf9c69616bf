"""judge_tasks / infer_topics: order kept, failures returned with their reason, never dropped.

The LLM boundary is a scripted gateway keyed by task text; the real-mock run is tests/synth/test_e2e.py.
"""

from __future__ import annotations

import asyncio
from typing import Any

from envscaler_core.llm.errors import LLMOutputInvalid
from envscaler_core.mine import infer_topics, judge_tasks
from envscaler_core.models.source import SourceTask


class ScriptedGateway:
    def __init__(self, replies: dict[str, dict[str, Any] | Exception]) -> None:
        self.replies = replies

    async def structured(self, prompt: Any, inp: Any, *, stage: str, **kw: Any) -> Any:
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


def test_judgement_that_stays_invalid_returns_the_task_unjudged_with_reason() -> None:
    exc = LLMOutputInvalid.__new__(LLMOutputInvalid)
    Exception.__init__(exc, "bad json")
    exc.reason = "bad json"
    out = asyncio.run(judge_tasks([task("Cancel order 4")], ScriptedGateway({"Cancel order 4": exc})))
    assert out[0].stateful is None and "bad json" in out[0].judge_reason


def test_infer_topics_builds_env_topics_linked_to_their_task() -> None:
    reply = {"analysis": "a", "summary": " Order desk ", "introduction": "Orders.", "usefulness": 8, "modelability": 9}
    source = task("Cancel order 4")
    result = asyncio.run(infer_topics([source], ScriptedGateway({"Cancel order 4": reply})))[0]
    assert result.failure is None and result.task_fp == source.fingerprint
    assert (result.topic.summary, result.topic.example_task, result.topic.source_task_fp) == (
        "Order desk", "Cancel order 4", source.fingerprint)
