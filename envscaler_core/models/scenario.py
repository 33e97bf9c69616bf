"""ScenGenerator records: an initial state, a task, checks that reward it, and a reference plan."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field

from envscaler_core.llm.replies.lenient import ToolArgs
from envscaler_core.models.base import Model, Record, fingerprint_of


class ToolCall(Model):
    tool: str
    args: ToolArgs = Field(default_factory=dict)  # a JSON string holding an object is read as that object


class CheckSpec(Model):
    """One checklist item and the `check_func(final_state)` that decides it (`initial_state` is a
    global inside the check)."""

    item: str = Field(min_length=1)
    code: str = Field(min_length=1)


ScenarioStatus = Literal["generated", "verified", "rejected"]


class Scenario(Record):
    """A task in an environment, with verifiable rewards. Only `verified` scenarios go to RL."""

    fingerprint_fields: ClassVar[tuple[str, ...]] = ("env_id", "initial_state", "task")

    env_id: str
    initial_state: dict[str, Any]
    task: str = Field(min_length=1)
    checklist: list[str] = Field(default_factory=list)
    checks: list[CheckSpec] = Field(default_factory=list)
    reference_solution: list[ToolCall] = Field(default_factory=list)
    status: ScenarioStatus = "generated"
    rejection_reason: str | None = None
    repair_attempts: int = 0
    footprint: list[str] | None = Field(default=None, description=(
        "JSON Pointers the verified reference solution's calls change (each call's change; an added or removed "
        "entry is its key, a list element what it was at the start: `[id=\"E1\"]`, the k-th of equal ones `#k`): a trajectory's changes outside them are "
        "collateral (scenarios/footprint.py). None: "
        "no verified reference solution recorded one (verified before rt9-A F3, or never verified), so no guard."))
    footprint_scheme: int = Field(default=1, description=(
        "How `footprint` names paths (scenarios/footprint.FOOTPRINT_SCHEME when it was recorded). A footprint "
        "under another scheme is derived again from the reference solution. 1: recorded before equal list "
        "elements were told apart and elements kept their start names (rt11-A F2, F3), or never set."))
    checks_in_identity: bool = False
    """True for a scenario imported from EnvScaler's records: its checklist and checks are part of its
    identity, so two records with the same env, state and task but different checklists stay two scenarios
    (EnvScaler differential round 3, F1: one checklist was lost and the survivor's trajectories carried the
    other record's task_id). A factory scenario keeps env, state and task as its identity: Stage 4 writes and
    repairs its checks after the scenario exists, under the same key."""

    @property
    def fingerprint(self) -> str:
        if not self.checks_in_identity:
            return super().fingerprint
        payload = self.model_dump(mode="json", include={*self.fingerprint_fields, "checklist", "checks"})
        return fingerprint_of({"kind": type(self).__name__, **payload})
