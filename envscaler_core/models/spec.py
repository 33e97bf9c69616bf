"""Stage 2 intermediate: the environment's state space, rules and operations."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from envscaler_core.models.base import Model, Record

OperationKind = Literal["query", "state_change"]


class Entity(Model):
    """One kind of thing the environment keeps state about."""

    name: str = Field(min_length=1)
    attributes: list[str] = Field(min_length=1, description="Attribute names (a list, not one string).")
    description: str = ""


class Operation(Model):
    """One tool the environment will expose; `kind` decides which invariants validation checks."""

    name: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    description: str = Field(min_length=1)
    kind: OperationKind


class EnvSpec(Record):
    """Everything Stage 2 decided before writing code."""

    fingerprint_fields: ClassVar[tuple[str, ...]] = ("topic_fp", "entities", "rules", "operations")

    topic_fp: str
    summary: str
    introduction: str
    entities: list[Entity] = Field(min_length=1)
    rules: list[str] = Field(default_factory=list)
    operations: list[Operation] = Field(default_factory=list)
