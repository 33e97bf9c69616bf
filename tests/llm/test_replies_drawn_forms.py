"""Spec: answers re-rendered in many drawn combinations of real-endpoint forms read back, through
`llm.replies`, exactly as the clean answers do: every structured prompt of every library domain, and
tool-calling and text turns. (The HTTP path is covered by test_realism_forms; this draws far more
combinations than HTTP could afford.)"""

from __future__ import annotations

import json
import zlib
from typing import Any

import pytest

from envscaler_core.llm.repair_turns import structured_answer
from envscaler_core.llm.replies import defines, extract_code, normalise_assistant
from envscaler_core.prompts import STRUCTURED_PROMPTS
from mock_llm import brain, forms, library
from mock_llm.realism import RealismConfig, plan_for
from tests.mock_llm.helpers import request_for, tool_dicts
from tests.mock_llm.test_brain_structured import inputs_for

DRAWS = 60
MIXED = RealismConfig(mode="on")


def _seed(*parts: object) -> int:
    """A draw's request key: stable across processes (str hashes are salted per process)."""
    return zlib.crc32(":".join(map(str, parts)).encode())
ALL = RealismConfig(mode="all")


def _stage_view(prompt_id: str, inp: Any, out: Any) -> dict[str, Any]:
    data = out.model_dump(mode="json")
    if isinstance(data.get("code"), str):
        names = {"scen.check_function": ("check_func",), "synth.method": (getattr(inp, "target", None) and inp.target.name,),
                 "synth.class_skeleton": (data.get("class_name"),)}.get(prompt_id, ())
        data["code"] = extract_code(data["code"], defines(*names) if all(names) and names else None)
    return data


@pytest.mark.parametrize("domain", library.domains(), ids=[d.name for d in library.domains()])
def test_structured_answers_read_back_unchanged_in_drawn_forms(domain) -> None:
    inputs = inputs_for(domain)
    for prompt_id, spec in STRUCTURED_PROMPTS.items():
        inp = inputs[prompt_id]
        reply = brain.dispatch(request_for(spec, inp))
        clean = _stage_view(prompt_id, inp, spec.output_model.model_validate_json(reply.content))
        for draw in range(DRAWS):
            plan = plan_for(MIXED if draw % 2 else ALL, _seed(domain.name, prompt_id, draw))
            message = forms.structured(reply.content, plan)
            out = structured_answer(message, spec.output_model)
            assert _stage_view(prompt_id, inp, out) == clean, (prompt_id, sorted(plan.forms))


def _calls(message: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    return [(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in message.get("tool_calls") or []]


@pytest.mark.parametrize("domain", library.domains(), ids=[d.name for d in library.domains()])
def test_tool_turns_read_back_as_the_same_calls_with_reasoning_set_aside(domain) -> None:
    tools = tool_dicts(domain)
    plan_calls = [(c["tool"], c["args"]) for c in domain.scenarios[0].reference_solution]
    for draw in range(DRAWS):
        plan = plan_for(MIXED if draw % 2 else ALL, _seed(domain.name, "tools", draw))
        for k in range(1, len(plan_calls) + 1):
            message = normalise_assistant(forms.tool_turn(plan_calls[:k], plan, 1), tools, turn=draw)
            assert _calls(message) == plan_calls[:k], sorted(plan.forms)
            assert len({c["id"] for c in message["tool_calls"]}) == k
            assert "###STOP###" not in (message["content"] or ""), "reasoning leaked into the content"


def test_text_turns_read_back_without_their_reasoning() -> None:
    text = "Task Completed. I booked the appointment."
    for draw in range(DRAWS * 4):
        plan = plan_for(MIXED if draw % 2 else ALL, draw)
        message = normalise_assistant(forms.text(text, plan))
        assert message["content"] == text, sorted(plan.forms)
        assert ("reasoning_content" in message) == any(f in plan.forms for f in ("think", "think_unclosed",
                                                                                   "think_no_open", "reasoning_field"))
