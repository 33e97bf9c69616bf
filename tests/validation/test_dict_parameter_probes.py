"""Spec: a parameter that takes a dict is probed with the keys the method's code accepts (outside check
rt22-R13, F1), on the plan and on a real programmatic validation in the sandbox.

* `updates: Dict[str, Any]` (or `dict`, `Optional[Dict[str, Any]]`) of a tool that accepts only the keys its
  code spells out (`allowed = {"phone", "email"}`) gets those keys first, each with a value a record holds, as
  a `**fields` tool does (docs/validation.md, "further keywords"); before, it got one field of a record
  (`{"name": "Ann"}`) and `{}`, every probe was refused and the class was rejected on coverage.
* A TypedDict parameter (`item: LineItem` with `sku`, `qty`) gets one object with all its declared keys, a key
  the code checks against a container (`item.get("sku") in self.catalog`) taking that container's keys."""

from __future__ import annotations

from typing import Any

import pytest

from tests.interop.test_dict_parameters_with_allowed_keys import ORDERS, PATIENTS
from tests.validation.probe_helpers import plans_by_tool as _plan, validate_programmatically as _validate

PATIENT_STATE = {"patients": {"p1": {"name": "Ann", "phone": "111", "email": "a@x.org"},
                              "p2": {"name": "Bob", "phone": "333", "email": "b@x.org"}}}
ORDER_STATE = {"catalog": {"X-1": {"price": 3}, "Y-2": {"price": 5}}, "orders": {"o1": {"lines": []}}}
ANNOTATIONS = ["Dict[str, Any]", "dict", "Optional[Dict[str, Any]] = None"]


def _succeeded(outcome: Any, tool: str) -> bool:
    return any(r.tool == tool and isinstance(r.observation, dict) and r.observation.get("success") is True
               for r in outcome.rounds)


@pytest.mark.parametrize("annotation", ANNOTATIONS)
def test_a_dict_parameter_is_offered_the_keys_the_code_spells_out_first(annotation: str) -> None:
    plan = _plan(PATIENTS.replace("ANNOTATION", annotation), "PatientRegistry", PATIENT_STATE)["update_patient_info"]
    values = (plan.options.get("updates") or plan.optional["updates"]).values
    assert values[0] == {"phone": "333"} and {} in values, values  # a spelled-out key, with another record's value


def test_a_typed_dict_parameter_is_offered_its_keys_with_a_catalog_sku() -> None:
    values = _plan(ORDERS, "OrderBook", ORDER_STATE)["add_line"].options["item"].values
    assert values[0] == {"sku": "X-1", "qty": 1}, values


@pytest.mark.parametrize("annotation", ANNOTATIONS)
def test_a_tool_taking_allowed_keys_succeeds_in_validation(annotation: str, sandbox_pool: Any) -> None:
    outcome = _validate(PATIENTS.replace("ANNOTATION", annotation), "PatientRegistry", PATIENT_STATE, sandbox_pool)
    assert outcome.report.accepted and _succeeded(outcome, "update_patient_info"), outcome.report


def test_a_tool_taking_a_typed_dict_succeeds_in_validation(sandbox_pool: Any) -> None:
    outcome = _validate(ORDERS, "OrderBook", ORDER_STATE, sandbox_pool)
    assert outcome.report.accepted and _succeeded(outcome, "add_line"), outcome.report
