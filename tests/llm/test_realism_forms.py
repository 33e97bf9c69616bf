"""Spec: every form a real endpoint sends, alone and combined, gives every stage the same answer as
the clean form, through the real gateway and the real mock over HTTP, and costs no extra request
except the one retry a cut-off reply needs.

"Same answer" is what the stage consumes: the validated output model, with code fields read the way
the stage reads them (`extract_code`), and for chat turns the tool calls (name and arguments) or the
text, reasoning set aside.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from envscaler_core.llm import LLMGateway
from envscaler_core.llm.replies import defines, extract_code
from envscaler_core.prompts import STRUCTURED_PROMPTS
from envscaler_core.prompts.agent import AGENT_NON_CONVERSATIONAL, USER_SIMULATOR
from mock_llm import library
from mock_llm.realism import FORMS, GROUPS, SINGLES, RealismConfig
from tests.fixtures.llm import mock_llm_settings
from tests.mock_llm.helpers import tool_dicts
from tests.mock_llm.test_brain_structured import inputs_for

DOMAIN = library.by_name("clinic_appointments")
INPUTS = inputs_for(DOMAIN)
COMBINED = [sorted({members[k % len(members)] for members in GROUPS.values()} | set(SINGLES)) for k in range(4)]
"""Every single form at once, with each member of each exclusive group in at least one combination."""


def _code_check(prompt_id: str, inp: Any, out: dict[str, Any]) -> Any:
    if prompt_id == "scen.check_function":
        return defines("check_func")
    if prompt_id == "synth.method":
        return defines(inp.target.name)
    if prompt_id == "synth.class_skeleton":
        return defines(out["class_name"])
    return None


def meaning(prompt_id: str, out: Any) -> dict[str, Any]:
    """What the stage takes from a structured answer (code as the stage extracts it)."""
    data = out.model_dump(mode="json")
    if isinstance(data.get("code"), str):
        data["code"] = extract_code(data["code"], _code_check(prompt_id, INPUTS[prompt_id], data))
    return data


def chat_meaning(reply: Any) -> Any:
    calls = reply.message.get("tool_calls")
    if calls:
        return [(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in calls]
    return reply.message["content"]


def _gateway(server: Any) -> LLMGateway:
    # request counts are part of the spec, so a transport retry (a reply slower than the timeout on a
    # loaded CI machine) must not happen: this spec is about forms, not timeouts
    return LLMGateway(mock_llm_settings(server.base_url, cache=False, repair_attempts=2, timeout_s=300.0))


def _chat_requests() -> list[tuple[Any, list[dict[str, Any]], list[dict[str, Any]] | None, str]]:
    sc = DOMAIN.scenarios[0]
    tools = tool_dicts(DOMAIN)
    task = [{"role": "system", "content": "solve"}, {"role": "user", "content": sc.task}]
    unknown = [{"role": "system", "content": "solve"}, {"role": "user", "content": "Plant a tree in the garden."}]
    user = [{"role": "system", "content": USER_SIMULATOR.system.format(task=sc.task)},
            {"role": "user", "content": "Hi! How can I help you today?"}]
    return [(AGENT_NON_CONVERSATIONAL, task, tools, "agent"), (AGENT_NON_CONVERSATIONAL, unknown, tools, "agent"),
            (USER_SIMULATOR, user, None, "user_sim")]


def _answers(server: Any) -> tuple[dict[str, Any], list[Any], int]:
    """Every structured prompt and chat request once, concurrently on one event loop."""
    gw = _gateway(server)
    before = server.stats()["requests_total"]

    async def everything() -> tuple[list[Any], list[Any]]:
        try:
            outs = await asyncio.gather(*(gw.structured(spec, INPUTS[pid], stage="scen")
                                          for pid, spec in STRUCTURED_PROMPTS.items()))
            replies = await asyncio.gather(*(gw.chat(msgs, prompt=prompt, stage=stage, tools=tools)
                                             for prompt, msgs, tools, stage in _chat_requests()))
            return list(outs), list(replies)
        finally:
            await gw.aclose()

    outs, replies = asyncio.run(everything())
    structured = {pid: meaning(pid, out) for pid, out in zip(STRUCTURED_PROMPTS, outs, strict=True)}
    return structured, [chat_meaning(r) for r in replies], server.stats()["requests_total"] - before


@pytest.fixture(scope="module")
def clean(mock_server: Any) -> tuple[dict[str, Any], list[Any], int]:
    mock_server.reset()
    return _answers(mock_server)


@pytest.fixture
def realistic(mock_server: Any):
    """The session mock with a realism setting for one test (reset afterwards)."""
    def use(names: list[str]) -> Any:
        mock_server.reset()
        mock_server.set_realism(RealismConfig(mode="exact", names=names))
        return mock_server
    yield use
    mock_server.reset()


def _calls() -> int:
    return len(STRUCTURED_PROMPTS) + len(_chat_requests())


@pytest.mark.parametrize("form", FORMS)
def test_each_form_alone_gives_every_stage_the_clean_answer(form, clean, realistic) -> None:
    server = realistic([form])
    structured, chats, requests = _answers(server)
    assert structured == clean[0]
    assert chats == clean[1]
    assert server.stats()["forms_used"].get(form, 0) > 0, f"{form} was never applied"
    extra = _calls() if form == "length" else 0  # a cut-off reply costs exactly its retry with more room
    assert requests == clean[2] + extra


@pytest.mark.parametrize("names", COMBINED, ids=[f"combo{k}" for k in range(len(COMBINED))])
def test_all_forms_combined_give_every_stage_the_clean_answer(names, clean, realistic) -> None:
    server = realistic(names)
    structured, chats, requests = _answers(server)
    assert structured == clean[0]
    assert chats == clean[1]
    assert requests == clean[2] + _calls()  # only the length retries


def test_the_mixed_setting_draws_forms_per_request_and_repeats_them_for_the_same_request(realistic) -> None:
    server = realistic([])
    server.set_realism("on")
    _answers(server)
    first = server.stats()["forms_used"]
    server.reset()
    server.set_realism("on")
    _answers(server)
    assert server.stats()["forms_used"] == first
    assert len(first) >= 8, first
