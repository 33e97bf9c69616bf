"""Stage 1 prompts: is a task stateful, and what environment would it happen in."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, Field

from envscaler_core.llm.replies.lenient import LooseWord, Score10
from envscaler_core.prompts.base import PromptSpec


class TaskInput(BaseModel):
    task: str


class NumberedTask(BaseModel):
    id: int
    task: str


class TaskBatchInput(BaseModel):
    """Several source tasks in one request. Each task alone is a prompt of a few hundred tokens, below
    providers' 1,024-token caching minimum, so one per request pays the instructions at the full rate
    every time; a batch pays them once."""

    tasks: list[NumberedTask] = Field(min_length=1)


class StatefulJudgement(BaseModel):
    analysis: str
    stateful: Annotated[bool, LooseWord]


class TopicInference(BaseModel):
    analysis: str
    summary: str = Field(min_length=1)
    introduction: str = Field(min_length=1)
    usefulness: Score10 = Field(ge=1, le=10)
    modelability: Score10 = Field(ge=1, le=10)


class StatefulJudgementItem(BaseModel):
    id: int
    analysis: str
    stateful: Annotated[bool, LooseWord]


class StatefulJudgements(BaseModel):
    judgements: list[StatefulJudgementItem]


class TopicInferenceItem(TopicInference):
    id: int


class TopicInferences(BaseModel):
    topics: list[TopicInferenceItem]


_BATCH = ("\nYou get several numbered requests at once. Judge each one on its own, as if it were the only "
          "one; give exactly one entry per id, in the given order, with that id.")

JUDGE_STATEFUL = PromptSpec(
    id="mine.judge_stateful",
    version=2,
    system=(
        "You filter user requests for building training environments. Answer stateful=true only if ALL hold:\n"
        "1. The request acts on a persistent environment with live state that supports both reading and explicit "
        "changes (create, update, delete, move, cancel, ...).\n"
        "2. It cannot be fulfilled without inspecting or modifying that actual data.\n"
        "3. The environment is a structured, domain-specific system (calendar, orders, inventory, file system, "
        "bank accounts, ticketing, CRM, ...).\n"
        "4. It is actionable in that system, not hypothetical.\n"
        "Open-domain questions, chit-chat, weather, content writing, pure calculation and hypotheticals are NOT "
        "stateful. Be strict."
    ),
    instructions="Decide whether this task depends on a stateful, domain-specific environment.",
    input_model=TaskInput,
    output_model=StatefulJudgement,
)

INFER_TOPIC = PromptSpec(
    id="mine.infer_topic",
    version=2,
    system=(
        "You are a task analyst. Given a raw user task, name the most plausible stateful, domain-specific "
        "environment in which it would occur: broad enough that similar tasks also run in it, narrow enough to "
        "be one coherent system. If several are equally plausible, pick one rather than hedging.\n"
        "summary: a short label (e.g. 'Clinic appointment scheduler'). introduction: about three sentences on "
        "the environment's structure, state, typical operations and scope, without mentioning the task.\n"
        "usefulness (1-10): how broadly useful the environment is for training agents. modelability (1-10): how "
        "easily it can be written as ONE Python class whose attributes hold JSON state and whose methods read and "
        "change it. Narrow or physical-world domains score low."
    ),
    instructions="Infer the environment this task would naturally take place in.",
    input_model=TaskInput,
    output_model=TopicInference,
)


JUDGE_STATEFUL_BATCH = PromptSpec(
    id="mine.judge_stateful_batch",
    version=1,
    system=JUDGE_STATEFUL.system + _BATCH,
    instructions="For each request, decide whether it depends on a stateful, domain-specific environment.",
    input_model=TaskBatchInput,
    output_model=StatefulJudgements,
)

INFER_TOPIC_BATCH = PromptSpec(
    id="mine.infer_topic_batch",
    version=1,
    system=INFER_TOPIC.system.replace("Given a raw user task", "Given raw user tasks").replace(
        "name the most plausible", "name for each the most plausible") + _BATCH,
    instructions="For each task, infer the environment it would naturally take place in.",
    input_model=TaskBatchInput,
    output_model=TopicInferences,
)
