"""Stage 3 prompts: a test initial state, the proposer agent and the judge agent."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, model_serializer

from envscaler_core.llm.replies.lenient import LooseWord, ToolArgs
from envscaler_core.models.changes import apply_changes
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
    """One tool's calls so far in a chain. Serialised without its zero counts: the statistics are the
    largest varying part of every proposer prompt, and zeros say nothing."""

    total: int = 0
    positive: int = 0
    negative: int = 0
    passes: int = 0
    warnings: int = 0
    fails: int = 0

    @model_serializer(mode="plain")
    def _without_zeros(self) -> dict[str, int]:
        return {name: value for name, value in ((n, getattr(self, n)) for n in type(self).model_fields) if value}


class ProposeInput(BaseModel):
    """Context (the same for every round of every chain): introduction, tools, the test state. Varying:
    this chain's focus, the tool statistics, the changes since the test state, the round."""

    introduction: str
    tool_schemas: list[dict[str, Any]] = Field(description=(
        "Each tool's function schema (name, description, parameter types, enums, required): what a call must "
        "fit. Part of the cached context, it also lifts the prompt past providers' 1,024-token caching "
        "minimum, below which every token is billed in full. (A one-line listing of the same tools beside "
        "it, as before, only repeated what the schemas say on every round.)"))
    initial_state: dict[str, Any] = Field(description="The test state every chain starts from.")
    chain: int = Field(default=0, description="Which of the parallel testers this is (0-based).")
    chains: int = Field(default=1, description="How many testers explore this environment at once.")
    focus: list[str] = Field(default_factory=list, description="Tools this chain tests first (chains split the tools).")
    stats: dict[str, ToolStats] = Field(description=(
        "Tools tested so far in this chain (absent: never called): every call made, and the verdicts of every "
        "round but the last, whose judge runs beside this proposal (llm_pass)."))
    changes: list[dict[str, Any]] = Field(
        default_factory=list, description="JSON-Pointer operations from the test state to the current state.")
    round: int
    rounds: int

    def current_state(self) -> dict[str, Any]:
        return apply_changes(self.initial_state, self.changes)


class ProposedCall(BaseModel):
    thought: str
    tool: str
    args: ToolArgs
    case_type: Annotated[CaseType, LooseWord]


class JudgeInput(BaseModel):
    """Context (the same for every round of every chain): introduction, rules, the class without its
    tools, the test state. Varying, most stable first: the called tool and its code (the same for every
    call of that tool), then the call, what it returned, the state before it (as changes since the test
    state) and what the call itself changed."""

    introduction: str
    rules: list[str]
    class_context: str = Field(description=(
        "The class file without its public tools: imports, constants, __init__ and every helper."))
    initial_state: dict[str, Any] = Field(description="The test state every chain starts from.")
    tool: str
    tool_kind: str | None = None
    tool_code: str = Field(default="", description=(
        "The called tool's source, then that of every public tool it calls itself."))
    case_type: CaseType
    args: dict[str, Any]
    observation: Any
    changes_before: list[dict[str, Any]] = Field(
        default_factory=list, description="JSON-Pointer operations from the test state to the state before the call.")
    call_changes: list[dict[str, Any]] = Field(
        default_factory=list, description="JSON-Pointer operations the call applied to that state (empty: unchanged).")


class JudgeOutput(BaseModel):
    analysis: str
    verdict: Annotated[Verdict, LooseWord]
    reason: str


STATE_WRITER_SYSTEM = (
    "You write the initial state (database) of a simulated environment as JSON, usable directly as the class's "
    "init_config: keys are the state attribute names, values match their declared types exactly. Respect the "
    "constraints visible in the code (valid statuses, required fields, cross-references that resolve). Give each "
    "container 3-5 distinct, realistic entries with natural fictional names, covering different statuses and "
    "value ranges; ISO dates; unique ids. When `variation` > 0, write a state different from earlier ones. If "
    "`feedback` is given, it says why the previous state was rejected."
)
"""One system text for every state written about a class (validation's test state, each scenario's
initial state): with the same context they share one cached prefix, so the scenario states are served
from the prefix the test state left (the class code is most of it)."""

TEST_STATE = PromptSpec(
    id="validate.test_state",
    version=3,
    system=STATE_WRITER_SYSTEM,
    instructions="Write an initial state for this environment class, to test its tools on.",
    input_model=StateInput,
    output_model=StateOutput,
    context=("introduction", "class_name", "class_code", "state_attributes"),
)

PROPOSE_CALL = PromptSpec(
    id="validate.propose_call",
    version=5,
    system=(
        "You are a test engineer exploring every tool of a simulated environment to find bugs: exceptions, "
        "wrong results, inconsistent state. Each round, propose ONE tool call. Positive cases use valid "
        "arguments taken from the current state; negative cases use nonexistent ids, wrong types, out-of-range, "
        "empty or extreme values. The current state is the initial state with the listed changes applied. First give "
        "each of your focus tools one positive and one negative case (other testers start with the rest); then "
        "prefer tools tested least, your focus tools among equals; balance positive and negative cases per tool. Other testers start from the same state: pick values and edge "
        "cases they are less likely to pick (tester j of k: prefer the j-th plausible value, not the first). Argument keys must be the tool's parameter names; only listed "
        "tools exist."
    ),
    instructions="Propose the next test call.",
    input_model=ProposeInput,
    output_model=ProposedCall,
    context=("introduction", "tool_schemas", "initial_state"),
)

JUDGE_CALL = PromptSpec(
    id="validate.judge_call",
    version=4,
    system=(
        "You review one executed tool call of a simulated environment: the class's source code (class_context: "
        "the class without its tools; tool_code: the called tool and the tools it calls), the call's "
        "arguments and return value, the state before it (the initial state with changes_before applied) and "
        "the changes the call made (call_changes). verdict 'pass': fully correct. 'warning': works but has robustness "
        "issues (missing validation or boundary checks). 'fail': wrong behaviour, an exception, a non-dict "
        "return, an incorrect or missing state change, a state change on a failed call or by a query, or a rule "
        "violation. reason: for fail or warning, the cause and a fix; for pass, 'ok'."
    ),
    instructions="Judge this tool call.",
    input_model=JudgeInput,
    output_model=JudgeOutput,
    context=("introduction", "rules", "class_context", "initial_state"),
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
