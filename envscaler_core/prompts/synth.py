"""Stage 2 prompts: state space, class skeleton, operations, one method per operation."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from envscaler_core.models.spec import Entity, Operation
from envscaler_core.prompts.base import PromptSpec


class TopicInput(BaseModel):
    summary: str
    introduction: str
    example_task: str
    feedback: str | None = Field(default=None, description="Why the previous attempt was rejected, if any.")


class StateSpaceOutput(BaseModel):
    analysis: str
    entities: list[Entity] = Field(min_length=1)
    rules: list[str]


class SkeletonInput(BaseModel):
    summary: str
    introduction: str
    entities: list[Entity]
    rules: list[str]
    feedback: str | None = Field(default=None, description="Why the previous attempt was rejected, if any.")


class CodeOutput(BaseModel):
    analysis: str
    code: str = Field(min_length=1)


class SkeletonOutput(CodeOutput):
    class_name: str = Field(pattern=r"^[A-Z][A-Za-z0-9_]*$")


class OperationsInput(BaseModel):
    summary: str
    introduction: str
    entities: list[Entity]
    rules: list[str]
    skeleton_code: str
    example_task: str
    feedback: str | None = Field(default=None, description="Why the previous attempt was rejected, if any.")


class OperationsOutput(BaseModel):
    analysis: str
    operations: list[Operation] = Field(min_length=1)


class MethodInput(BaseModel):
    summary: str
    introduction: str
    entities: list[Entity]
    rules: list[str]
    skeleton_code: str
    operation_names: list[str]
    target: Operation
    feedback: str | None = None


_CONTRACT = (
    "Environment contract: one top-level class with NO base class; state lives in instance attributes that are "
    "JSON-serialisable (dicts keyed by id, lists, scalars); __init__(self, init_config: dict | None = None) "
    "loads initial state from init_config (missing keys -> empty containers); every public method is a tool, "
    "fully type-annotated, with a Google-style docstring (description, Args:, Returns:); helpers start with '_'; "
    "a tool never raises for expected failures and returns {'success': True, 'data': ...} for queries, "
    "{'success': True, 'message': ...} for changes, or {'success': False, 'error': '...'}; a failed call leaves "
    "state unchanged; a query never changes state. Only the standard library may be imported."
)

STATE_SPACE = PromptSpec(
    id="synth.state_space",
    version=2,
    system=(
        "You design the state of a simulated software environment for agent training. From the environment "
        "summary, introduction and one example task, list the entities it keeps (name, attribute names, "
        "description) and the business rules its operations must enforce. Cover this task and similar ones, "
        "not all conceivable data. Every entity needs an id attribute."
    ),
    instructions="Infer the state space and rules of this environment.",
    input_model=TopicInput,
    output_model=StateSpaceOutput,
    context=("summary", "introduction", "example_task"),
)

CLASS_SKELETON = PromptSpec(
    id="synth.class_skeleton",
    version=2,
    system=(
        "You translate an environment's state space into the skeleton of one Python class: imports, optional "
        "TypedDicts per entity, and the class with only __init__, which declares one attribute per entity "
        "container (Dict[str, <Entity>Info] keyed by id) loaded from init_config. Comments list the rules. "
        "No other methods yet.\n" + _CONTRACT
    ),
    instructions="Write the class skeleton for this environment.",
    input_model=SkeletonInput,
    output_model=SkeletonOutput,
    context=("summary", "introduction", "entities", "rules"),
)

_TOOL_EXAMPLE = (
    "Example of a state-changing tool in this contract (from another environment), written as a method is answered:\n"
    "def cancel_order(self, order_id: str) -> dict:\n"
    "    \"\"\"Cancel an order that has not shipped yet.\n\n"
    "    Args:\n"
    "        order_id: The order's id.\n\n"
    "    Returns:\n"
    "        dict: success flag and a message, or an error.\n"
    "    \"\"\"\n"
    "    order = self.orders.get(order_id)\n"
    "    if order is None:\n"
    "        return {'success': False, 'error': f'order {order_id} not found'}\n"
    "    if order['status'] != 'pending':\n"
    "        return {'success': False, 'error': f\"order {order_id} is already {order['status']}\"}\n"
    "    order['status'] = 'cancelled'\n"
    "    return {'success': True, 'message': f'order {order_id} cancelled'}\n"
    "A query tool validates its arguments the same way and returns {'success': True, 'data': ...} without "
    "touching any attribute."
)

TOOLS_FAMILY_SYSTEM = (
    "You build a simulated software environment for agent training as one Python class, step by step: from "
    "its state space and class skeleton, first the list of tools (operations) it exposes, then each tool's "
    "method. Every tool must fit the environment contract below; the rules of the environment are enforced "
    "inside the tools.\n" + _CONTRACT + "\n" + _TOOL_EXAMPLE
)
"""The shared system text of the steps that work on one skeleton (operations, then every method): with
the same leading context they share one cached prefix, so the operations call warms the cache for the
method fan-out, and each step's own role and output schema follow the context (`PromptSpec.role`)."""

OPERATIONS = PromptSpec(
    id="synth.operations",
    version=3,
    system=TOOLS_FAMILY_SYSTEM,
    role=(
        "Step: list the tools (operations) the class should expose to an agent. Each has a snake_case "
        "name, a one-line description and a kind: 'query' (reads only) or 'state_change'. Offer more than the "
        "example task needs (get/list/filter, create/update/cancel/delete) so the environment supports many "
        "tasks, while staying within the state space."
    ),
    instructions="List the operations of this environment.",
    input_model=OperationsInput,
    output_model=OperationsOutput,
    context=("summary", "introduction", "entities", "rules", "skeleton_code", "example_task"),
)

METHOD = PromptSpec(
    id="synth.method",
    version=3,
    system=TOOLS_FAMILY_SYSTEM,
    role=(
        "Step: implement ONE method of the class, the target operation. Output only the method (starting "
        "with 'def', indented at column 0, taking self), with type hints and a Google-style docstring whose "
        "Args: section documents every parameter. Validate inputs and enforce the rules."
    ),
    instructions="Implement the target operation as a method of the class.",
    input_model=MethodInput,
    output_model=CodeOutput,
    context=("summary", "introduction", "entities", "rules", "skeleton_code", "operation_names"),
)

SynthStep = Literal["state_space", "class_skeleton", "operations", "method"]
