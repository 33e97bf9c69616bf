"""Trajectories as rows of EnvScaler's own SFT trajectory file, the input of its `sft/` scripts.

Its step 1 (`sft/step1_process_messages_by_tool_template.py`) reads a JSON *list* whose rows carry
`traj_type`, `task_info`, `steps`, and `tools`, `messages` and `user_messages` as JSON *strings*; it
renders each row's messages through the Qwen3 chat template, parses the rendered turns back, and then
puts every assistant turn's `reasoning_content` in front of it, asserting one rendered message per raw
message. Two rules follow for what we write:

* every assistant message has a string `reasoning_content` ("" when the model gave none): the script
  calls `.strip()` on it and a missing key raises `KeyError`;
* every assistant message calls at most one tool: the template merges consecutive tool messages into
  one user turn, so a turn with parallel calls breaks the count and the script's assertion. Such a
  trajectory is left out and counted, not split into turns the model never wrote.

`task_info.task_id` joins the row to its scenario in the same export's scenario files: a factory
run's task id is the scenario fingerprint's first 16 hex digits (as `interop.export` writes them), an
imported run's is the verbatim `task_id` of the record the scenario was promoted from (it used to be
the fingerprint there too, so no trajectory of an import joined its scenario: round-trip check 4, F1).

The conversation must open with a system message (the template writes one for the tools either way).
`user_messages` is the simulator's own message list in EnvScaler; we do not keep it, so it is `null`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from envscaler_core.export.row_tools import row_tools
from envscaler_core.export.sft import clean_messages
from envscaler_core.models.interop import ImportedEnv, ImportedScenario
from envscaler_core.models.trajectory import Trajectory

FILE_NAME = "envscaler_sft_traj.json"
NOT_IMPORTED = ("its scenario is not promoted from any record this import holds (an import stored before "
                "imports linked each record to its factory scenario has no link): import the same files "
                "into a new run id")


def imported_task_ids(store: Any, run_id: str) -> dict[str, Any] | None:
    """For an imported run, each promoted scenario's fingerprint -> its record's own `task_id` (the
    first record by split and position where two records promoted to one scenario); None for a factory run."""
    if not store.query(ImportedEnv, run_id=run_id):
        return None
    ids: dict[str, Any] = {}
    for s in sorted(store.query(ImportedScenario, run_id=run_id), key=lambda s: (s.split, s.position)):
        if s.scenario_fp is not None and s.scenario_fp not in ids:
            ids[s.scenario_fp] = s.record.get("task_id")
    return ids


def shared_task_ids(store: Any, run_id: str) -> list[str]:
    """One warning per (env id, task id) that distinct RL records of an import share: EnvScaler's task ids are
    timestamps that need not be unique, so a join of `envscaler_sft_traj.json` (or the RL file) with the
    scenario files on task_id cannot tell those records apart; the export keeps them all as they are. The id
    is compared and named with its type, as the record has it (`task_id` keeps its type: `7` and `"7"` are
    two ids; outside check 10, C-F6: they were reported as one shared id, both shown as '7')."""
    groups: dict[tuple[str, str], tuple[Any, set[str]]] = {}
    for s in (s for s in store.query(ImportedScenario, run_id=run_id) if s.split == "rl"):
        task = s.record.get("task_id")
        groups.setdefault((s.env_id, json.dumps(task, sort_keys=True)), (task, set()))[1].add(s.record_json)
    return [f"task_id {task!r} of env {env!r} is shared by {len(texts)} different RL records (EnvScaler's ids need "
            "not be unique): a join on task_id is ambiguous for them"
            for (env, _), (task, texts) in sorted(groups.items()) if len(texts) > 1]


def envscaler_sft_row(fingerprint: str, traj: Trajectory, task_ids: Mapping[str, Any] | None = None
                      ) -> tuple[dict[str, Any] | None, str | None]:
    """(row, None), or (None, why EnvScaler's SFT scripts, or a join with the scenario files, could not
    take this trajectory). `task_ids` is `imported_task_ids` (None: a factory run)."""
    if task_ids is not None and traj.scenario_fp not in task_ids:
        return None, NOT_IMPORTED
    task_id = traj.scenario_fp[:16] if task_ids is None else task_ids[traj.scenario_fp]
    messages = clean_messages(traj.messages)
    if not messages or messages[0].get("role") != "system":
        return None, "no system message first (EnvScaler's template round trip needs one)"
    for index, message in enumerate(messages):
        if message["role"] != "assistant":
            continue
        if len(message.get("tool_calls") or []) > 1:
            return None, (f"message {index} makes {len(message['tool_calls'])} parallel tool calls (EnvScaler's "
                          "step 1 needs one tool message per assistant turn)")
        reasoning = message.get("reasoning_content")
        message["reasoning_content"] = reasoning if isinstance(reasoning, str) else ""
    row = {
        "traj_type": traj.mode,
        "task_info": {"env_id": traj.env_id, "task_id": task_id, "task": _task(messages)},
        "tools": json.dumps([t.model_dump(mode="json") for t in row_tools(traj)], ensure_ascii=False),
        "messages": json.dumps(messages, ensure_ascii=False),
        "user_messages": "null",
        "steps": sum(1 for m in messages if m["role"] == "assistant"),
        "total_reward": traj.reward,
        "id": fingerprint,
    }
    return row, None


def _task(messages: list[dict[str, Any]]) -> str:
    """The first user turn: the task in a non-conversational episode, the simulator's opening otherwise."""
    return next((m["content"] for m in messages if m["role"] == "user" and isinstance(m.get("content"), str)), "")
