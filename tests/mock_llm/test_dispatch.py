"""Spec: dispatch refuses what it cannot answer, loudly and with the reason."""

from __future__ import annotations

import dataclasses

import pytest

from mock_llm import brain
from mock_llm.protocol import MockCannotAnswer, MockRequest
from envscaler_core.prompts import CHAT_PROMPTS, STRUCTURED_PROMPTS
from envscaler_core.prompts import mine as PM
from envscaler_core.prompts import scen as PS
from tests.mock_llm.helpers import request_for


def _judge_request() -> MockRequest:
    return request_for(PM.JUDGE_STATEFUL, PM.TaskInput(task="Cancel appointment A-002."))


def test_brain_handles_every_registered_prompt_id():
    assert set(STRUCTURED_PROMPTS) | set(CHAT_PROMPTS) <= set(brain._STRUCTURED) | set(brain._CHAT)


def test_unknown_prompt_id_is_refused_by_name():
    req = dataclasses.replace(_judge_request(), prompt_id="mine.guess_weather")
    with pytest.raises(MockCannotAnswer, match="unknown prompt id 'mine.guess_weather'"):
        brain.dispatch(req)


def test_untagged_request_is_refused():
    with pytest.raises(MockCannotAnswer, match="no X-EnvScaler-Prompt tag"):
        brain.dispatch(dataclasses.replace(_judge_request(), prompt_id=None, prompt_version=None))


def test_other_prompt_version_is_refused():
    with pytest.raises(MockCannotAnswer, match="not @99"):
        brain.dispatch(dataclasses.replace(_judge_request(), prompt_version=99))


def test_structured_request_without_input_block_is_refused():
    with pytest.raises(MockCannotAnswer, match="no '## Input' JSON block"):
        brain.dispatch(dataclasses.replace(_judge_request(), payload=None))


def test_payload_not_matching_the_input_model_is_refused_naming_the_field():
    with pytest.raises(MockCannotAnswer, match="task"):
        brain.dispatch(dataclasses.replace(_judge_request(), payload={"text": "x"}))


def test_task_outside_the_library_cannot_get_a_checklist():
    with pytest.raises(MockCannotAnswer, match="not one of the library's scenario tasks"):
        brain.dispatch(request_for(PS.CHECKLIST, PS.ChecklistInput(task="Water the plants.")))


def test_topic_for_a_task_outside_the_library_is_refused():
    with pytest.raises(MockCannotAnswer, match="no library domain"):
        brain.dispatch(request_for(PM.INFER_TOPIC, PM.TaskInput(task="Write a poem about the sea.")))


def test_same_request_gets_the_same_answer():
    assert brain.dispatch(_judge_request()) == brain.dispatch(_judge_request())


def test_concurrent_stage2_requests_never_fail_inside_the_mock(mock_stats_reset) -> None:
    """The brain answers in worker threads; every AST it builds is serialised (CPython's AST constructor
    is not thread-safe: "AST constructor recursion depth mismatch" used to surface as HTTP 500s)."""
    import asyncio

    import openai

    from envscaler_core.prompts import synth as PY
    from mock_llm import library
    from tests.mock_llm.test_brain_structured import inputs_for

    requests = []
    for domain in library.domains():
        inputs = inputs_for(domain)
        requests += [(PY.CLASS_SKELETON, inputs["synth.class_skeleton"]), (PY.OPERATIONS, inputs["synth.operations"]),
                     (PY.METHOD, inputs["synth.method"])]
    mock_stats_reset.set_realism("envscaler_class,dataclass_records,typing_annotations")

    async def fire() -> None:
        client = openai.AsyncOpenAI(base_url=mock_stats_reset.base_url, api_key="mock", max_retries=0)
        await asyncio.gather(*(client.chat.completions.create(
            model="m", messages=spec.render(inp), extra_headers={"X-EnvScaler-Prompt": spec.tag})
            for _ in range(4) for spec, inp in requests))
        await client.close()

    asyncio.run(fire())
    assert mock_stats_reset.stats()["by_status"] == {"200": 4 * len(requests)}
