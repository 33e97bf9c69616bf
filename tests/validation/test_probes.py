"""Spec: probes take real ids from the test state for positive cases and keep schema types for negative ones."""

from __future__ import annotations

from envscaler_core.models.env import ToolFunction, ToolSchema
from envscaler_core.validation import probes_for
from envscaler_core.validation.probes import MISSING_ID

STATE = {"patients": {"P7": {"name": "Ana"}}, "appointments": {"A1": {"appointment_id": "A1", "slot": 3}}}


def tool(name: str, props: dict, required: list[str] | None = None) -> ToolSchema:
    return ToolSchema(function=ToolFunction(name=name, description=name, parameters={
        "type": "object", "properties": props, "required": list(props) if required is None else required}))


def test_positive_id_comes_from_a_field_with_the_same_name() -> None:
    probes = probes_for([tool("cancel", {"appointment_id": {"type": "string"}})], STATE)
    assert probes[0].case_type == "positive" and probes[0].args == {"appointment_id": "A1"}


def test_positive_id_falls_back_to_a_container_key() -> None:
    probes = probes_for([tool("get_patient", {"patient_id": {"type": "string"}})], STATE)
    assert probes[0].args == {"patient_id": "P7"}


def test_negative_case_points_at_a_missing_id_and_keeps_other_args() -> None:
    probes = probes_for([tool("move", {"appointment_id": {"type": "string"}, "slot": {"type": "integer"}})], STATE)
    assert probes[1].case_type == "negative" and probes[1].args == {"appointment_id": MISSING_ID, "slot": 3}


def test_enum_parameters_use_an_allowed_value() -> None:
    probes = probes_for([tool("set", {"status": {"type": "string", "enum": ["open", "closed"]}})], STATE)
    assert probes[0].args == {"status": "open"}


def test_tools_without_parameters_get_one_positive_probe() -> None:
    assert [p.case_type for p in probes_for([tool("list_all", {})], STATE)] == ["positive"]


def test_optional_parameters_are_left_out() -> None:
    probes = probes_for([tool("find", {"q": {"type": "string"}, "limit": {"type": "integer"}}, ["q"])], STATE)
    assert set(probes[0].args) == {"q"}
