"""Spec: a trajectory's state changes outside the task's footprint are `collateral_changes`, and such a
trajectory is not SFT data (outside check rt9-A, F3). The checks only test the wanted changes: an agent
that never read "revoke G-002 and give Dr. Lee access to P-03" and revoked every grant, then granted
every patient x provider pair, passed them all (reward 1.0, 0 tool errors) and was kept as SFT data,
leaving every provider able to see every patient. The footprint is what the verified reference
solution changes (initial -> its final state; key level for added and removed entries)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from envscaler_core.config import Settings
from envscaler_core.models.env import AcceptedEnv, ToolFunction, ToolSchema
from envscaler_core.models.scenario import CheckSpec, Scenario, ToolCall
from envscaler_core.report.env_section import chat
from envscaler_core.rollout import ScriptedAgent, filter_trajectories, replay_agent, run_rollout
from envscaler_core.scenarios import verify_scenario

CLINIC = '''
class Clinic:
    def __init__(self, init_config: dict = None):
        cfg = init_config or {}
        self.patients = cfg.get("patients", [])
        self.providers = cfg.get("providers", [])
        self.grants = cfg.get("grants", {})
        self.next_id = cfg.get("next_id", 1)

    def list_grants(self) -> dict:
        """List every access grant.

        Args:
        """
        return {"success": True, "data": list(self.grants.values())}

    def revoke_access(self, grant_id: str) -> dict:
        """Revoke one access grant.

        Args:
            grant_id: the grant id
        """
        grant = self.grants.get(grant_id)
        if grant is None or grant["status"] != "active":
            return {"success": False, "error": "no active grant " + grant_id}
        grant["status"] = "revoked"
        return {"success": True}

    def grant_access(self, patient_id: str, provider_id: str) -> dict:
        """Give a provider summary access to a patient's records; the grant id is generated.

        Args:
            patient_id: the patient id
            provider_id: the provider id
        """
        grant_id = "G-%03d" % self.next_id
        self.next_id += 1
        self.grants[grant_id] = {"grant_id": grant_id, "patient_id": patient_id, "provider_id": provider_id,
                                 "status": "active"}
        return {"success": True, "grant_id": grant_id}
'''
STATE = {
    "patients": ["P-01", "P-02", "P-03"], "providers": ["PR-1", "PR-2"], "next_id": 4,
    "grants": {"G-001": {"grant_id": "G-001", "patient_id": "P-01", "provider_id": "PR-1", "status": "active"},
               "G-002": {"grant_id": "G-002", "patient_id": "P-03", "provider_id": "PR-2", "status": "active"},
               "G-003": {"grant_id": "G-003", "patient_id": "P-02", "provider_id": "PR-2", "status": "active"}},
}
REVOKED = CheckSpec(item="G-002 is revoked", code=(
    "def check_func(final_state):\n    return final_state['grants']['G-002']['status'] == 'revoked'\n"))
GRANTED = CheckSpec(item="PR-1 can see P-03", code=(
    "def check_func(final_state):\n"
    "    return any(g['patient_id'] == 'P-03' and g['provider_id'] == 'PR-1' and g['status'] == 'active'\n"
    "               for g in final_state['grants'].values())\n"))
PLAN = [ToolCall(tool="revoke_access", args={"grant_id": "G-002"}),
        ToolCall(tool="grant_access", args={"patient_id": "P-03", "provider_id": "PR-1"})]
BLIND = ([ToolCall(tool="revoke_access", args={"grant_id": g}) for g in STATE["grants"]]
         + [ToolCall(tool="grant_access", args={"patient_id": p, "provider_id": q})
            for p in STATE["patients"] for q in STATE["providers"]])


def _tool(name: str, props: dict[str, Any]) -> ToolSchema:
    return ToolSchema(function=ToolFunction(name=name, description=name.replace("_", " "), parameters={
        "type": "object", "properties": props, "required": list(props)}))


def clinic_env() -> AcceptedEnv:
    return AcceptedEnv(
        env_id="env_clinic", candidate_fp="0" * 64, summary="Patient records.", introduction="Who sees whose records.",
        rules=[], class_name="Clinic", class_code=CLINIC,
        tools=[_tool("list_grants", {}), _tool("revoke_access", {"grant_id": {"type": "string"}}),
               _tool("grant_access", {"patient_id": {"type": "string"}, "provider_id": {"type": "string"}})],
        tool_kinds={"list_grants": "query", "revoke_access": "state_change", "grant_access": "state_change"},
        score=1.0, validation_mode="programmatic")


@pytest.fixture(scope="module")
def verified(sandbox_pool: Any) -> Scenario:
    """The scenario as verification leaves it: its footprint recorded from the reference solution."""
    sc = Scenario(env_id="env_clinic", initial_state=STATE, task="Revoke Dr. Park's grant G-002 and give Dr. Lee "
                  "(PR-1) summary access to P-03's records.", checklist=[REVOKED.item, GRANTED.item],
                  checks=[REVOKED, GRANTED], reference_solution=PLAN)
    report = verify_scenario(sc, clinic_env(), sandbox_pool, 2.0)
    assert report.ok, report.reason
    return sc.model_copy(update={"status": "verified", "footprint": report.footprint})


def roll(runtime: Any, scenario: Scenario, agent: Any, **rollout: Any) -> Any:
    settings = Settings.model_validate({"rollout": rollout})
    return asyncio.run(run_rollout(clinic_env(), scenario, runtime, None, settings, agent=agent))


def test_verification_records_what_the_reference_solution_changes_as_the_footprint(verified: Scenario) -> None:
    assert verified.footprint == ["/grants/G-002/status", "/grants/G-004", "/next_id"]


def test_a_task_blind_agent_that_passes_every_check_is_dropped_for_its_collateral_changes(
        sandbox_pool: Any, verified: Scenario) -> None:
    traj = roll(sandbox_pool, verified, ScriptedAgent(BLIND, per_message=len(BLIND), name="blind"))
    assert traj.reward == 1.0 and traj.all_passed and traj.tool_errors == 0
    assert traj.collateral_changes == 7  # G-001 and G-003 revoked, G-005..G-009 added
    assert traj.collateral_paths[:2] == ["/grants/G-001/status", "/grants/G-003/status"]
    kept, dropped = filter_trajectories([traj], Settings().rollout)
    assert kept == [] and [r.split(":")[0] for r in dropped[0][1]] == ["collateral_changes"]


def test_the_reference_solution_has_no_collateral_changes_and_is_kept(sandbox_pool: Any, verified: Scenario) -> None:
    traj = roll(sandbox_pool, verified, replay_agent(PLAN))
    assert traj.all_passed and traj.collateral_changes == 0 and traj.collateral_paths == []
    assert filter_trajectories([traj], Settings().rollout)[0] == [traj]


def test_reads_then_the_same_writes_are_kept_generated_ids_included(sandbox_pool: Any, verified: Scenario) -> None:
    honest = [ToolCall(tool="list_grants", args={}), *PLAN, ToolCall(tool="list_grants", args={})]
    traj = roll(sandbox_pool, verified, ScriptedAgent(honest, name="honest"))
    assert traj.all_passed and traj.collateral_changes == 0
    assert filter_trajectories([traj], Settings().rollout)[0] == [traj]


def test_the_guard_can_be_turned_off_and_the_count_is_still_recorded(sandbox_pool: Any, verified: Scenario) -> None:
    traj = roll(sandbox_pool, verified, ScriptedAgent(BLIND, per_message=len(BLIND), name="blind"))
    settings = Settings.model_validate({"rollout": {"drop_collateral_changes": False}})
    assert filter_trajectories([traj], settings.rollout)[0] == [traj] and traj.collateral_changes == 7


def test_without_a_footprint_there_is_no_guard(sandbox_pool: Any, verified: Scenario) -> None:
    traj = roll(sandbox_pool, verified.model_copy(update={"footprint": None}),
                ScriptedAgent(BLIND, per_message=len(BLIND), name="blind"))
    assert traj.collateral_changes is None and traj.collateral_paths == []
    assert filter_trajectories([traj], Settings().rollout)[0] == [traj]


def test_the_report_shows_a_trajectorys_collateral_changes(sandbox_pool: Any, verified: Scenario) -> None:
    blind = chat(roll(sandbox_pool, verified, ScriptedAgent(BLIND, per_message=len(BLIND), name="blind")))
    assert "7 collateral changes" in blind and "/grants/G-001/status" in blind
    assert "collateral" not in chat(roll(sandbox_pool, verified, replay_agent(PLAN)))
