"""Spec: the tool schemas sent to an endpoint hold no list `type` (an outside check, Gemini's OpenAI
endpoint: every rollout of an env with an `x: str = None` parameter stopped the run at its first turn,
HTTP 400 "Unknown name "type" ... Proto field is not repeating, cannot start list"). What is sent says
the same as what is stored, as `anyOf` branches of one type each; the stored schema (what validation
and the gym read) keeps its own form. Scripted local endpoint, real gateway, schemas extracted from
a real env class."""

from __future__ import annotations

import json
from typing import Any

from envscaler_core.synth.tool_schema import extract_tools
from tests.llm.helpers import scripted_gateway as gateway
from tests.llm.scripted_endpoint import completion

ENV = '''
from typing import Literal, Optional


class Clinic:
    def __init__(self) -> None:
        self.doctors: dict[str, dict] = {}

    def list_doctors(self, specialty: str = None, location: str | None = None,
                     tags: list[int | None] | None = None, sort: Literal["name", "rating"] = None,
                     limit: Optional[int] = 10) -> dict:
        """List doctors.

        Args:
            specialty: Only doctors of this specialty.
        """
        return {"success": True, "data": []}
'''


def _types(value: Any) -> list[Any]:
    """Every `type` keyword's value anywhere in a schema."""
    if isinstance(value, dict):
        return [*([value["type"]] if "type" in value else []), *(t for v in value.values() for t in _types(v))]
    return [t for v in value for t in _types(v)] if isinstance(value, list) else []


def _sent_tools(endpoint: Any) -> list[dict[str, Any]]:
    tools = [t.model_dump(mode="json", exclude_none=True) for t in extract_tools(ENV, "Clinic")]
    endpoint.script(completion("Here are the doctors."))
    gateway(endpoint).chat_sync([{"role": "user", "content": "Which doctors are there?"}], tools=tools)
    return endpoint.requests[-1]["tools"]


def test_no_sent_schema_holds_a_list_type(endpoint) -> None:
    """Before: `{"type": ["string", "null"]}` was sent as stored, which Gemini refuses."""
    sent = _sent_tools(endpoint)
    assert _types(sent) and all(isinstance(t, str) for t in _types(sent))


def test_a_nullable_parameter_is_sent_as_anyof_with_its_description_outside(endpoint) -> None:
    params = _sent_tools(endpoint)[0]["function"]["parameters"]["properties"]
    assert params["specialty"] == {"description": "Only doctors of this specialty.",
                                   "anyOf": [{"type": "string"}, {"type": "null"}]}
    assert params["location"] == {"anyOf": [{"type": "string"}, {"type": "null"}]}
    assert params["tags"] == {"anyOf": [{"type": "array", "items": {"anyOf": [{"type": "integer"}, {"type": "null"}]}},
                                        {"type": "null"}]}
    assert params["sort"] == {"anyOf": [{"type": "string", "enum": ["name", "rating"]}, {"type": "null"}]}


def test_the_stored_schema_keeps_its_list_type() -> None:
    """Validation and the gym check arguments against the stored form: it does not change."""
    stored = extract_tools(ENV, "Clinic")[0].function.parameters["properties"]
    assert stored["specialty"]["type"] == ["string", "null"]
    assert json.dumps(stored["sort"]["enum"]) == '["name", "rating", null]'
