"""End to end over the real mock LLM server: real API-Bank tasks -> judge -> topics -> select ->
synthesize."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from envscaler_core.config import MineSettings, Settings
from envscaler_core.llm import LLMGateway
from envscaler_core.mine import infer_topics, judge_tasks, read_sources, select_topics
from envscaler_core.synth import extract_tools, static_problems, synthesize_env

API_BANK = Path(__file__).resolve().parents[3] / "shared" / "data" / "source_tasks" / "api_bank_lv3_train.json"


@pytest.fixture
def gateway(llm_settings: Settings) -> LLMGateway:
    return LLMGateway(llm_settings.llm)


async def _pipeline(gateway: Any) -> tuple[list[Any], list[Any], list[Any]]:
    tasks = read_sources([API_BANK], max_tasks=40).tasks
    judged = await judge_tasks(tasks, gateway, concurrency=4)
    stateful = [t for t in judged if t.stateful]
    results = await infer_topics(stateful, gateway)
    topics = [r.topic for r in results if r.topic is not None]
    selected = [t for t in await select_topics(topics, gateway, MineSettings(select_n=3)) if t.selected]
    synth = [await synthesize_env(t, gateway, Settings()) for t in selected]
    return judged, selected, synth


def test_api_bank_slice_becomes_candidates_that_pass_static_checks(gateway: Any) -> None:
    judged, selected, results = asyncio.run(_pipeline(gateway))
    assert all(t.stateful is not None or t.judge_reason for t in judged)
    assert any(t.stateful for t in judged), "the mock judged no API-Bank task stateful"
    assert 1 <= len(selected) <= 3
    generated = [r.candidate for r in results if r.candidate is not None and r.candidate.status == "generated"]
    assert generated, [r.failure or (r.candidate and r.candidate.failure_reason) for r in results]
    for candidate in generated:
        assert static_problems(candidate.class_code, candidate.class_name) == []
        assert candidate.tools == extract_tools(candidate.class_code, candidate.class_name)
        assert set(candidate.tool_kinds) == {t.function.name for t in candidate.tools}
