"""Stage 2/3 records: candidate environment classes and the environments that were accepted."""

from __future__ import annotations

import keyword
from typing import Annotated, Any, ClassVar, Literal

from pydantic import AfterValidator, Field

from envscaler_core.models.base import Model, Record
from envscaler_core.models.spec import OperationKind


def is_python_identifier(name: object) -> bool:
    """A name as Python reads it: Unicode letters included (`Bibliothèque`), keywords not."""
    return isinstance(name, str) and name.isidentifier() and not keyword.iskeyword(name)


def _python_identifier(name: str) -> str:
    if not is_python_identifier(name):
        raise ValueError(f"{name!r} is not a Python identifier")
    return name


class ToolFunction(Model):
    name: str
    description: str
    parameters: dict[str, Any] = Field(description="JSON Schema object for the arguments.")


class ToolSchema(Model):
    """An OpenAI function-calling tool definition, extracted from the class by AST analysis."""

    type: Literal["function"] = "function"
    function: ToolFunction


EpisodeRules = Literal["envscaler", "factory"]
"""The rule set an episode plays by when a call goes wrong (`rollout/rules.py`): EnvScaler's runtime's for an
imported env, so one env rewards the same trajectories in both runtimes; the factory's documented contract
for a synthesized one. A tool that raises ends the episode at 0 under both."""

CandidateStatus = Literal["generated", "static_failed", "validating", "accepted", "rejected", "duplicate", "error"]


class EnvCandidate(Record):
    """One synthesized environment class (the single-class contract in ARCHITECTURE.md)."""

    # per topic: two topics that yield the same code are two candidates, and the validate stage keeps
    # one and marks the other `duplicate` (keyed on code alone, they overwrote each other's topic_fp)
    fingerprint_fields: ClassVar[tuple[str, ...]] = ("topic_fp", "class_name", "class_code")

    topic_fp: str
    spec_fp: str | None = None
    variant: str | None = Field(default=None, description="Mock library defect name, if any (tests/demo).")
    class_name: Annotated[str, AfterValidator(_python_identifier)]
    class_code: str = Field(min_length=1)
    tools: list[ToolSchema] = Field(default_factory=list)
    tool_kinds: dict[str, OperationKind] = Field(
        default_factory=dict, description="query/state_change per tool, from the spec's operations."
    )
    status: CandidateStatus = "generated"
    failure_reason: str | None = None


class AcceptedEnv(Record):
    """A candidate that passed validation: the unit later stages, exports and MCP serve."""

    fingerprint_fields: ClassVar[tuple[str, ...]] = ("candidate_fp",)

    env_id: str = Field(description="Stable short id, e.g. 'env_' + first 12 hex of the candidate fp.")
    candidate_fp: str
    summary: str
    introduction: str
    rules: list[str] = Field(default_factory=list)
    class_name: str
    class_code: str
    tools: list[ToolSchema]
    tool_kinds: dict[str, OperationKind] = Field(default_factory=dict)
    score: float = Field(ge=0.0, le=1.0)
    validation_mode: Literal["programmatic", "llm", "both"]
    episode_rules: EpisodeRules = Field(
        default="factory",
        description="Which runtime's rules an episode of this env plays by when a call goes wrong: 'envscaler' for "
        "an env imported from EnvScaler's files (a call its runtime runs into a TypeError ends the episode at 0, "
        "only the first call of a message runs), 'factory' for one this factory synthesized (docs/interop.md).")
