"""Stage 3 records: one judged tool call per round, and the verdict over all rounds."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field

from envscaler_core.models.base import Model, Record

Verdict = Literal["pass", "warning", "fail"]
CaseType = Literal["positive", "negative"]
ValidationMode = Literal["programmatic", "llm"]


class ValidationRound(Record):
    """One executed and judged tool call. Every round is stored, with its reason."""

    fingerprint_fields: ClassVar[tuple[str, ...]] = ("candidate_fp", "mode", "index")

    candidate_fp: str
    mode: ValidationMode
    index: int = Field(ge=0)
    tool: str
    args: dict[str, Any] = Field(default_factory=dict)
    case_type: CaseType
    check: str | None = Field(default=None, description="Programmatic invariant name, if any.")
    observation: Any = None
    error: str | None = Field(default=None, description="Sandbox-level error (timeout, crash, ...).")
    state_before: dict[str, Any] = Field(default_factory=dict)
    state_after: dict[str, Any] = Field(default_factory=dict)
    state_diff: dict[str, Any] = Field(default_factory=dict)
    verdict: Verdict
    reason: str = ""
    elapsed_ms: float | None = None


class ToolKindLabel(Model):
    """Whether a tool is a query or a state change, and where that label came from."""

    kind: Literal["query", "state_change"]
    source: str = Field(description="spec | name | docstring | llm | code, joined with '+' when several agree.")
    evidence: str = ""
    writes: list[str] = Field(default_factory=list, description="State attributes the body writes (AST).")


class ValidationReport(Model):
    """What `envscaler validate` prints and what decides acceptance."""

    accepted: bool
    score: float = Field(ge=0.0, le=1.0, description="(pass + warning) / total over counted rounds.")
    threshold: float
    mode: Literal["programmatic", "llm", "both"]
    rounds: int
    passes: int = 0
    warnings: int = 0
    fails: int = 0
    skipped: int = Field(default=0, description="Proposed calls not counted: unknown tool, schema-rejected, no proposal.")
    critical: list[str] = Field(default_factory=list, description="Contract breaches observed in the sandbox.")
    reasons: list[str] = Field(default_factory=list, description="Distinct failure reasons, most common first.")
    per_tool: dict[str, dict[str, int]] = Field(default_factory=dict)
    tool_kinds: dict[str, ToolKindLabel] = Field(
        default_factory=dict, description="The label each tool was validated under (spec, or inferred).")
    unreached: list[str] = Field(
        default_factory=list, description="Tools no call ever got to succeed (their code path never ran).")
    llm_pass_skipped: str | None = Field(
        default=None, description="Why the LLM rounds did not run although the mode has them: the free "
                                  "programmatic pass already rejected the candidate on a contract fact, so no "
                                  "LLM validation tokens were spent on it.")
    blocking: list[str] = Field(
        default_factory=list, description="Why acceptance is impossible besides contract breaches: state-"
                                          "changing tools whose code never ran.")
