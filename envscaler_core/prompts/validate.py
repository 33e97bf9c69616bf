"""Stage 3 prompts: a test initial state, the proposer agent and the judge agent."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from envscaler_core.llm.replies.lenient import LooseWord, ToolArgs
from envscaler_core.models.validation import CaseType, Verdict
from envscaler_core.prompts.base import PromptSpec


class StateInput(BaseModel):
    introduction: str
    class_name: str
    class_code: str
    state_attributes: dict[str, str] = Field(description="Attribute name -> annotated type, from __init__.")
    variation: int = Field(default=0, description="Asks for a different state than earlier ones.")
    feedback: str | None = None


class StateOutput(BaseModel):
    analysis: str
    state: dict[str, Any]


class ToolStats(BaseModel):
    total: int = 0
    positive: int = 0
    negative: int = 0
    passes: int = 0
    warnings: int = 0
    fails: int = 0


class ProposeInput(BaseModel):
    introduction: str
    tools: list[str] = Field(description="One line per tool: name(param: type, ...) - description.")
    stats: dict[str, ToolStats]
    state: dict[str, Any]
    round: int
    rounds: int


class ProposedCall(BaseModel):
    thought: str
    tool: str
    args: ToolArgs
    case_type: Annotated[CaseType, LooseWord]


class JudgeInput(BaseModel):
    introduction: str
    rules: list[str]
    class_header: str = Field(description="Source from file start through __init__.")
    tool: str
    tool_kind: str | None = None
    method_source: str
    args: dict[str, Any]
    case_type: CaseType
    observation: Any
    state_before: dict[str, Any]
    state_after: dict[str, Any]
    state_diff: dict[str, Any]


class JudgeOutput(BaseModel):
    analysis: str
    verdict: Annotated[Verdict, LooseWord]
    reason: str


TEST_STATE = PromptSpec(
    id="validate.test_state",
    version=1,
    system=(
        "You write the initial state of a simulated environment as JSON, usable directly as the class's "
        "init_config: keys are the state attribute names, values match their declared types exactly. Respect "
        "the constraints visible in the code (valid statuses, required fields, cross-references that resolve). "
        "Give each container 3-5 distinct, realistic, fictional entries covering different statuses and value "
        "ranges; ISO dates; unique ids."
    ),
    instructions="Write an initial state for this environment class.",
    input_model=StateInput,
    output_model=StateOutput,
)

PROPOSE_CALL = PromptSpec(
    id="validate.propose_call",
    version=1,
    system=(
        "You are a test engineer exploring every tool of a simulated environment to find bugs: exceptions, "
        "wrong results, inconsistent state. Each round, propose ONE tool call. Positive cases use valid "
        "arguments taken from the current state; negative cases use nonexistent ids, wrong types, out-of-range, "
        "empty or extreme values. Prefer tools tested least, and balance positive and negative cases per tool. "
        "Argument keys must be the tool's parameter names; only listed tools exist."
    ),
    instructions="Propose the next test call.",
    input_model=ProposeInput,
    output_model=ProposedCall,
)

JUDGE_CALL = PromptSpec(
    id="validate.judge_call",
    version=1,
    system=(
        "You review one executed tool call of a simulated environment: its source code, arguments, return value "
        "and the state before and after. verdict 'pass': fully correct. 'warning': works but has robustness "
        "issues (missing validation or boundary checks). 'fail': wrong behaviour, an exception, a non-dict "
        "return, an incorrect or missing state change, a state change on a failed call or by a query, or a rule "
        "violation. reason: for fail or warning, the cause and a fix; for pass, 'ok'."
    ),
    instructions="Judge this tool call.",
    input_model=JudgeInput,
    output_model=JudgeOutput,
)


class ToolToLabel(BaseModel):
    name: str
    description: str = Field(description="The docstring's summary.")
    source: str = Field(description="The method's source code.")


class ToolKindsInput(BaseModel):
    introduction: str
    class_header: str = Field(description="Source from file start through __init__.")
    tools: list[ToolToLabel]


class ToolKindAnswer(BaseModel):
    tool: str
    kind: Literal["query", "state_change"]
    reason: str


class ToolKindsOutput(BaseModel):
    labels: list[ToolKindAnswer]


TOOL_KINDS = PromptSpec(
    id="validate.tool_kinds",
    version=1,
    system=(
        "You label the tools of a simulated environment class for its test plan. A 'query' only reads the "
        "environment's state (get, list, search, check, count, compute); a 'state_change' is meant to create, "
        "update or delete something in it. Judge each tool by its PURPOSE, as an agent calling it would expect "
        "from its name and documentation, not by what its code happens to do: a tool called get_item whose "
        "code also increments a counter is still a query (that hidden write is the bug the tests look for). "
        "Give one label per listed tool, with a one-sentence reason."
    ),
    instructions="Label every tool as query or state_change.",
    input_model=ToolKindsInput,
    output_model=ToolKindsOutput,
)
