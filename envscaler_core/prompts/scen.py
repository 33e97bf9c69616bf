"""ScenGenerator prompts: initial state, task, checklist, check functions, reference solution."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from envscaler_core.models.scenario import ToolCall
from envscaler_core.models.spec import Operation
from envscaler_core.prompts.base import PromptSpec
from envscaler_core.prompts.validate import STATE_WRITER_SYSTEM, StateInput, StateOutput


class TaskInput(BaseModel):
    env_id: str
    introduction: str
    rules: list[str]
    operations: list[Operation]
    initial_state: dict[str, Any]
    feedback: str | None = None


class TaskOutput(BaseModel):
    analysis: str
    task: str = Field(min_length=1)


class ChecklistInput(BaseModel):
    task: str
    feedback: str | None = None


class ChecklistOutput(BaseModel):
    analysis: str
    items: list[str] = Field(min_length=1)


class CheckFunctionInput(BaseModel):
    introduction: str
    initial_state: dict[str, Any]
    task: str
    item: str
    feedback: str | None = None


class CheckFunctionOutput(BaseModel):
    analysis: str
    code: str = Field(min_length=1)


class NumberedItem(BaseModel):
    id: int
    item: str


class CheckFunctionsInput(BaseModel):
    """Every item of one checklist in one request: one check alone is a prompt below providers' 1,024-token
    caching minimum, so one request per item pays the state and the task at the full rate each time."""

    introduction: str
    initial_state: dict[str, Any]
    task: str
    items: list[NumberedItem] = Field(min_length=1)


class CheckFunctionItem(BaseModel):
    id: int
    analysis: str
    code: str = Field(min_length=1)


class CheckFunctionsOutput(BaseModel):
    checks: list[CheckFunctionItem]


class SolutionInput(BaseModel):
    introduction: str
    tools: list[str]
    initial_state: dict[str, Any]
    task: str
    checklist: list[str]
    feedback: str | None = None


class SolutionOutput(BaseModel):
    analysis: str
    calls: list[ToolCall] = Field(min_length=1)


INITIAL_STATE = PromptSpec(
    id="scen.initial_state",
    version=3,
    system=STATE_WRITER_SYSTEM,  # validation's test state has the same system text and context: one cached prefix
    instructions="Write an initial state for this environment, for a task scenario.",
    input_model=StateInput,
    output_model=StateOutput,
    context=("introduction", "class_name", "class_code", "state_attributes"),
)

TASK = PromptSpec(
    id="scen.task",
    version=2,
    system=(
        "You design a task for an agent that will act in this environment with its tools. The task must be "
        "realistic, feasible from the given initial state with the listed operations, and REQUIRE state changes "
        "(pure lookups are not allowed); combine several sub-goals needing multiple query and change calls. "
        "Give the identifiers the agent cannot discover itself, describe goals not steps, and never require "
        "values the agent cannot control (generated ids, timestamps)."
    ),
    instructions="Write one task for this initial state.",
    input_model=TaskInput,
    output_model=TaskOutput,
    context=("env_id", "introduction", "rules", "operations"),
)

CHECKLIST = PromptSpec(
    id="scen.checklist",
    version=2,
    system=(
        "You split a task into an ordered checklist of independent, self-contained items, each starting with "
        "'Has', naming exact fields and values, each verifiable by one boolean expression over the final state. "
        "Split multi-field requirements into separate items."
    ),
    instructions="Write the checklist for this task.",
    input_model=ChecklistInput,
    output_model=ChecklistOutput,
    context=("task",),
)

CHECK_FUNCTION = PromptSpec(
    id="scen.check_function",
    version=3,
    system=(
        "You write `def check_func(final_state) -> bool` deciding one checklist item from the environment's "
        "final state (a dict shaped like the initial state, which is available as the global `initial_state`). "
        "Derive field names from the initial state. Match explicit target values exactly; for generated values "
        "(ids, timestamps) check only existence and type. Use initial_state when the item is about a change. "
        "Return a real bool; never mutate anything; import only modules that compute (re, math, json, datetime, "
        "collections, itertools, functools, string, statistics, decimal, uuid, hashlib, ...), never clocks, "
        "randomness, I/O or reflection (getattr, eval, frames). The check must be False on the "
        "initial state (a check that is already True rewards doing nothing and is rejected) and True once the "
        "item is done. If `feedback` is given, it explains why your previous function was rejected."
    ),
    instructions="Write the check function for this item.",
    input_model=CheckFunctionInput,
    output_model=CheckFunctionOutput,
    context=("introduction", "initial_state", "task"),
)

CHECK_FUNCTIONS = PromptSpec(
    id="scen.check_functions",
    version=2,
    system=CHECK_FUNCTION.system.replace(
        "You write `def check_func(final_state) -> bool` deciding one checklist item",
        "For each numbered checklist item you write its own `def check_func(final_state) -> bool` deciding that "
        "item").replace(" If `feedback` is given, it explains why your previous function was rejected.", "")
    + " Each item's code is a separate module defining check_func; give exactly one entry per id, in order.",
    instructions="Write the check function of every item.",
    input_model=CheckFunctionsInput,
    output_model=CheckFunctionsOutput,
    context=("introduction", "initial_state", "task"),
)

REFERENCE_SOLUTION = PromptSpec(
    id="scen.reference_solution",
    version=2,
    system=(
        "You solve a task in a simulated environment by writing the exact sequence of tool calls (tool name and "
        "arguments) that accomplishes it from the given initial state. Use only listed tools and their "
        "parameter names; use ids present in the state. Every call must succeed from the state the earlier calls "
        "leave behind. If `feedback` is given, it names the checks your previous plan left unsatisfied."
    ),
    instructions="Write the tool-call plan that solves this task.",
    input_model=SolutionInput,
    output_model=SolutionOutput,
    context=("introduction", "tools", "initial_state", "task", "checklist"),
)
