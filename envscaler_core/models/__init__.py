"""Pydantic v2 models for every record that flows through the factory."""

from envscaler_core.models.base import Model, Record, canonical_json, compact_json, fingerprint_of, utcnow
from envscaler_core.models.bfcl import BFCLEvalReport, BFCLTaskResult, SubsetScore
from envscaler_core.models.env import AcceptedEnv, CandidateStatus, EnvCandidate, EpisodeRules, ToolFunction, ToolSchema
from envscaler_core.models.failure import StageFailure
from envscaler_core.models.interop import CheckAudit, ImportedEnv, ImportedScenario
from envscaler_core.models.llm import LLMCall, LLMCallStatus
from envscaler_core.models.run import Run, RunStatus
from envscaler_core.models.scenario import CheckSpec, Scenario, ScenarioStatus, ToolCall
from envscaler_core.models.source import SourceTask
from envscaler_core.models.spec import Entity, EnvSpec, Operation, OperationKind
from envscaler_core.models.topic import EnvTopic
from envscaler_core.models.trajectory import CheckResult, TerminationReason, TokenUsage, Trajectory
from envscaler_core.models.validation import CaseType, ValidationMode, ValidationReport, ValidationRound, Verdict

__all__ = [
    "AcceptedEnv", "BFCLEvalReport", "BFCLTaskResult", "SubsetScore", "CandidateStatus", "CaseType", "CheckAudit",
    "CheckResult", "CheckSpec", "EnvCandidate", "EnvSpec", "EnvTopic", "Entity", "EpisodeRules", "ImportedEnv", "ImportedScenario",
    "LLMCall", "LLMCallStatus", "Model", "Operation", "OperationKind", "Record", "Run",
    "RunStatus", "Scenario", "ScenarioStatus", "SourceTask", "StageFailure", "TerminationReason", "TokenUsage", "ToolCall",
    "ToolFunction", "ToolSchema", "Trajectory", "ValidationMode", "ValidationReport", "ValidationRound",
    "Verdict", "canonical_json", "compact_json", "fingerprint_of", "utcnow",
]
