"""The RL scenario set: one self-contained row per verified scenario, as JSONL and Parquet.

A row carries everything an RL framework needs without the store: the env class (name, code, tool
schemas, the intro/rules for the system prompt), the initial state, the task and the checks that
reward it, and `episode_rules` (whether the env plays EnvScaler's runtime's rules when a call goes wrong,
as an imported env does, or the factory's: `rollout/rules.py`). Free-form JSON (states, tool schemas,
reference plans) is stored as JSON *text*: every env
has a different state shape, and a columnar schema inferred from one env would not fit the next, so
both files share this one fixed schema. `row_to_records` turns a row back into models and refuses a row
whose content does not hash to its `row_sha256` (every other column, checks and reference solution
included) or its task, state and env to its `scenario_fp`: a hand-edited or truncated file. These are
digests, not signatures: they catch edits and corruption, not someone who recomputes them.
"""

from __future__ import annotations

import hashlib
from typing import Any

import pyarrow as pa

from envscaler_core.models import AcceptedEnv, CheckSpec, Scenario, ToolCall, ToolSchema, canonical_json, compact_json
from envscaler_core.text_files import json_value

RL_SCHEMA = pa.schema(
    [
        pa.field("scenario_fp", pa.string(), nullable=False),
        pa.field("env_id", pa.string(), nullable=False),
        pa.field("env_candidate_fp", pa.string(), nullable=False),
        pa.field("env_summary", pa.string(), nullable=False),
        pa.field("env_introduction", pa.string(), nullable=False),
        pa.field("env_rules", pa.list_(pa.string()), nullable=False),
        pa.field("env_score", pa.float64(), nullable=False),
        pa.field("env_validation_mode", pa.string(), nullable=False),
        pa.field("episode_rules", pa.string(), nullable=False),
        pa.field("class_name", pa.string(), nullable=False),
        pa.field("class_code", pa.string(), nullable=False),
        pa.field("tools_json", pa.string(), nullable=False),
        pa.field("tool_kinds_json", pa.string(), nullable=False),
        pa.field("task", pa.string(), nullable=False),
        pa.field("initial_state_json", pa.string(), nullable=False),
        pa.field("checklist", pa.list_(pa.string()), nullable=False),
        pa.field(
            "checks",
            pa.list_(pa.struct([pa.field("item", pa.string(), nullable=False), pa.field("code", pa.string(), nullable=False)])),
            nullable=False,
        ),
        pa.field("reference_solution_json", pa.string(), nullable=False),
        pa.field("row_sha256", pa.string(), nullable=False),
        pa.field(  # export schema 3; derived from the columns above, so outside row_sha256 and optional on read
            "prompt",
            pa.list_(pa.struct([pa.field("role", pa.string(), nullable=False),
                                pa.field("content", pa.string(), nullable=False)])),
            nullable=False,
        ),
    ]
)
DERIVED_COLUMNS = ("prompt",)
"""Columns rebuilt from the others: a row written before they existed (export schema 2) still loads."""
RL_COLUMNS = tuple(n for n in RL_SCHEMA.names if n not in DERIVED_COLUMNS)


class RLRowError(ValueError):
    """A row of an RL scenario file that cannot be turned back into an env and a scenario."""


def env_columns(env: AcceptedEnv) -> dict[str, Any]:
    """The env half of a row: computed once per env, shared by all of its scenarios' rows."""
    return {
        "env_id": env.env_id,
        "env_candidate_fp": env.candidate_fp,
        "env_summary": env.summary,
        "env_introduction": env.introduction,
        "env_rules": list(env.rules),
        "env_score": env.score,
        "env_validation_mode": env.validation_mode,
        "episode_rules": env.episode_rules,
        "class_name": env.class_name,
        "class_code": env.class_code,
        "tools_json": compact_json([t.model_dump(mode="json") for t in env.tools]),
        "tool_kinds_json": canonical_json(env.tool_kinds),
    }


def rl_row(fingerprint: str, scenario: Scenario, env: AcceptedEnv | dict[str, Any]) -> dict[str, Any]:
    """One row; pass `env_columns(env)` instead of the env when writing many rows of one env."""
    env_cols = env_columns(env) if isinstance(env, AcceptedEnv) else env
    if env_cols["env_id"] != scenario.env_id:
        raise ValueError(f"scenario {fingerprint[:12]} belongs to {scenario.env_id}, not {env_cols['env_id']}")
    row = {
        "scenario_fp": fingerprint,
        **env_cols,
        "task": scenario.task,
        "initial_state_json": compact_json(scenario.initial_state),
        "checklist": list(scenario.checklist),
        "checks": [{"item": c.item, "code": c.code} for c in scenario.checks],
        "reference_solution_json": compact_json([c.model_dump(mode="json") for c in scenario.reference_solution]),
    }
    return {**row, "row_sha256": row_digest(row), "prompt": agent_prompt(row)}


def agent_prompt(row: dict[str, Any]) -> list[dict[str, str]]:
    """TRL's conversational prompt (`[{"role", "content"}, ...]`, the `prompt` column GRPOTrainer
    requires): the system text and the task as the user turn, exactly as the gym's agent gets them
    (`ScenarioEnv.reset` -> `info["system_prompt"]`, then the task)."""
    from envscaler_core.prompts.agent import AGENT_NON_CONVERSATIONAL
    from envscaler_core.rollout.agents import system_text

    env = AcceptedEnv.model_construct(introduction=row["env_introduction"], rules=list(row["env_rules"]))
    return [{"role": "system", "content": system_text(AGENT_NON_CONVERSATIONAL, env)},
            {"role": "user", "content": row["task"]}]


def row_digest(row: dict[str, Any]) -> str:
    """sha256 of every column but itself: `scenario_fp` covers the env, state and task only, so an edited
    check (`return True`), checklist or reference solution passed unnoticed (outside check, 2026-11-26)."""
    body = {k: v for k, v in row.items() if k != "row_sha256" and k not in DERIVED_COLUMNS}
    return hashlib.sha256(canonical_json(body).encode("utf-8")).hexdigest()


def row_to_records(row: dict[str, Any], where: str = "row") -> tuple[AcceptedEnv, Scenario]:
    """(env, scenario) from one exported row; `where` names the row in errors (file:line)."""
    missing = [c for c in RL_COLUMNS if c not in row]
    if missing:
        hint = (" (rows exported before episode_rules was carried: export the run again, so the gym plays each "
                "env by its own rules)" if "episode_rules" in missing else "")
        raise RLRowError(f"{where}: missing field(s) {', '.join(missing)}{hint}")
    texts = ("tools_json", "tool_kinds_json", "initial_state_json", "reference_solution_json")
    if odd := [c for c in texts if not isinstance(row[c], str)]:
        raise RLRowError(f"{where}: {', '.join(odd)} must be JSON text, not {type(row[odd[0]]).__name__}")
    parsed = {c: json_value(row[c], f"{where}: {c}", RLRowError) for c in texts}
    try:
        env = AcceptedEnv(
            env_id=row["env_id"], candidate_fp=row["env_candidate_fp"], summary=row["env_summary"],
            introduction=row["env_introduction"], rules=row["env_rules"], class_name=row["class_name"],
            class_code=row["class_code"],
            tools=[ToolSchema.model_validate(t) for t in parsed["tools_json"]],
            tool_kinds=parsed["tool_kinds_json"], score=row["env_score"],
            validation_mode=row["env_validation_mode"], episode_rules=row["episode_rules"],
        )
        scenario = Scenario(
            env_id=row["env_id"], initial_state=parsed["initial_state_json"], task=row["task"],
            checklist=row["checklist"], checks=[CheckSpec.model_validate(c) for c in row["checks"]],
            reference_solution=[ToolCall.model_validate(c) for c in parsed["reference_solution_json"]],
            status="verified", checks_in_identity=row["episode_rules"] == "envscaler",
        )
    except (ValueError, TypeError) as exc:  # pydantic ValidationError and JSONDecodeError are ValueErrors
        raise RLRowError(f"{where}: {exc}") from exc
    if scenario.checks_in_identity and scenario.fingerprint != row["scenario_fp"]:
        # an imported scenario exported before its checks were part of its identity (differential round 3, F1)
        scenario = scenario.model_copy(update={"checks_in_identity": False})
    if scenario.fingerprint != row["scenario_fp"]:
        raise RLRowError(f"{where}: content does not match scenario_fp {row['scenario_fp'][:12]} (edited or corrupt)")
    if row_digest({c: row[c] for c in RL_COLUMNS}) != row["row_sha256"]:
        raise RLRowError(f"{where}: content does not match row_sha256 {str(row['row_sha256'])[:12]} (a check, the "
                         "checklist, the reference solution or the env was edited, or the file is corrupt)")
    if "prompt" in row and row["prompt"] != agent_prompt(row):
        raise RLRowError(f"{where}: prompt is not the system text and task this row's env and task give (edited or corrupt)")
    return env, scenario
