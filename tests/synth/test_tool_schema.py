"""AST extraction of OpenAI tool schemas and class facts from a generated environment."""

from __future__ import annotations

from typing import Any

import pytest

from envscaler_core.synth import SchemaError, class_header, extract_tools, method_sources, state_attributes

HEADER = "from typing import Any, Dict, List, Literal, Optional\n\n\nclass Env:\n" \
         "    def __init__(self, init_config: dict | None = None):\n" \
         "        self.items: Dict[str, dict] = {}\n        self.log = []\n"


def params_of(signature: str, doc: str = '"""Do it."""') -> dict[str, Any]:
    code = HEADER + f"\n    def op(self, {signature}) -> dict:\n        {doc}\n        return {{}}\n"
    return extract_tools(code, "Env")[0].function.parameters


@pytest.mark.parametrize(("annotation", "schema"), [
    ("str", {"type": "string"}),
    ("int", {"type": "integer"}),
    ("float", {"type": "number"}),
    ("bool", {"type": "boolean"}),
    ("list", {"type": "array", "items": {}}),
    ("dict", {"type": "object"}),
    ("Any", {}),
    ("Optional[str]", {"type": ["string", "null"]}),
    ("str | None", {"type": ["string", "null"]}),
    ("Literal['open', 'closed']", {"type": "string", "enum": ["open", "closed"]}),
    ("List[int]", {"type": "array", "items": {"type": "integer"}}),
    ("list[str]", {"type": "array", "items": {"type": "string"}}),
    ("Dict[str, float]", {"type": "object", "additionalProperties": {"type": "number"}}),
    ("dict[str, int]", {"type": "object", "additionalProperties": {"type": "integer"}}),
    ("'int'", {"type": "integer"}),
])
def test_annotation_maps_to_json_schema(annotation: str, schema: dict[str, Any]) -> None:
    assert params_of(f"x: {annotation}")["properties"]["x"] == schema


def test_parameters_with_defaults_are_not_required() -> None:
    params = params_of("a: str, b: Optional[int] = None, c: int = 3")
    assert params["required"] == ["a"]


@pytest.mark.parametrize(("signature", "schema"), [
    ("x: str = None", {"type": ["string", "null"]}),
    ("x: Optional[str] = None", {"type": ["string", "null"]}),
    ("x: Literal['low', 'high'] = None", {"type": ["string", "null"], "enum": ["low", "high", None]}),
    ("*, x: int = None", {"type": ["integer", "null"]}),
    ("x: Any = None", {}),
])
def test_a_parameter_whose_default_is_none_takes_an_explicit_null(signature: str, schema: dict[str, Any]) -> None:
    """Calling `op(x=None)` is what the default means, so the schema must not refuse null."""
    assert params_of(signature)["properties"]["x"] == schema


def test_another_default_does_not_make_a_parameter_nullable() -> None:
    assert params_of("x: str = 'low'")["properties"]["x"] == {"type": "string"}


def test_optional_without_default_is_still_required() -> None:
    """The method cannot be called without it, so the schema must not let the agent omit it."""
    assert params_of("a: Optional[str]")["required"] == ["a"]


def test_description_is_the_summary_and_args_describe_parameters() -> None:
    doc = ('"""Cancel an order.\n\n        Only pending orders.\n\n        Args:\n            order_id (str): The'
           ' order\n                to cancel.\n            reason: Why.\n\n        Returns:\n            dict: ok\n        """')
    tool = extract_tools(HEADER + f"\n    def cancel(self, order_id: str, reason: str = '') -> dict:\n        {doc}\n"
                         "        return {}\n", "Env")[0]
    assert tool.function.description == "Cancel an order."
    props = tool.function.parameters["properties"]
    assert props["order_id"]["description"] == "The order to cancel."
    assert props["reason"]["description"] == "Why."


def test_private_and_dunder_methods_are_not_tools() -> None:
    code = HEADER + "\n    def _helper(self, x: int) -> dict:\n        return {}\n" \
                    "\n    def __repr__(self) -> str:\n        return 'E'\n" \
                    "\n    def ping(self) -> dict:\n        \"\"\"Ping.\"\"\"\n        return {}\n"
    assert [t.function.name for t in extract_tools(code, "Env")] == ["ping"]


def test_unannotated_parameter_is_a_named_error_not_a_crash() -> None:
    code = HEADER + "\n    def op(self, x) -> dict:\n        return {}\n"
    with pytest.raises(SchemaError, match="'op': parameter 'x' has no type annotation"):
        extract_tools(code, "Env")


def test_state_attributes_come_from_init_with_annotation_text() -> None:
    assert state_attributes(HEADER, "Env") == {"items": "Dict[str, dict]", "log": ""}


def test_class_header_runs_from_file_start_through_init() -> None:
    code = HEADER + "\n    def ping(self) -> dict:\n        return {}\n"
    assert class_header(code, "Env") == HEADER


def test_method_sources_keep_exact_lines() -> None:
    code = HEADER + "\n    def ping(self) -> dict:\n        return {}\n"
    assert method_sources(code, "Env")["ping"] == "    def ping(self) -> dict:\n        return {}\n"
