"""Spec: `--format envscaler` also writes the kept trajectories as EnvScaler's own SFT trajectory file,
the input its `sft/step1_process_messages_by_tool_template.py` reads.

What that script does with a row, as rules (read from RUC-NLPIR/EnvScaler, not copied): it indexes
`traj_type`, `task_info`, `tools`, `messages`, `user_messages`, `steps`; `json.loads` the three string
fields; renders the messages with the Qwen3 chat template, which writes consecutive tool messages as
ONE user turn and puts the system message first; then asserts one rendered message per raw message
and calls `raw[j]["reasoning_content"].strip()` on every assistant message."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from envscaler_core.config import Settings
from envscaler_core.export import export_run
from envscaler_core.rollout import AgentTurn, run_rollout
from envscaler_core.store import Store
from tests.export.records import Populated, verified
from tests.scenarios.helpers import library_env, scenario

FILE = "envscaler_sft_traj.json"


def _rendered_count(messages: list[dict[str, Any]]) -> int:
    """How many turns the Qwen3 template's rendering parses back into: a run of tool messages is one."""
    count, previous = 0, None
    for message in messages:
        if not (message["role"] == "tool" and previous == "tool"):
            count += 1
        previous = message["role"]
    return count


def _as_step1_reads_it(row: dict[str, Any]) -> dict[str, Any]:
    """process_hf_data's field access, then keep_think_history's assertion and per-turn reads."""
    item = {"traj_type": row["traj_type"], "task_info": row["task_info"], "tools": json.loads(row["tools"]),
            "messages": json.loads(row["messages"]), "user_messages": json.loads(row["user_messages"]),
            "steps": row["steps"]}
    assert item["messages"][0]["role"] == "system"
    assert _rendered_count(item["messages"]) == len(item["messages"])
    for message in item["messages"]:
        if message["role"] == "assistant":
            message["reasoning_content"].strip()
    return item


def _export(store: Store, run_id: str, tmp_path: Path, settings: Settings | None = None) -> tuple[list[dict[str, Any]], Any]:
    manifest = export_run(store, run_id, settings or Settings(), tmp_path, formats=["envscaler"])
    return json.loads((tmp_path / run_id / FILE).read_text(encoding="utf-8")), manifest


def test_every_row_goes_through_envscalers_step1_rules(store: Store, populated: Populated, tmp_path: Path) -> None:
    rows, manifest = _export(store, populated.run_id, tmp_path)
    assert rows and manifest.counts.envscaler_traj == len(rows)
    for row in rows:
        item = _as_step1_reads_it(row)
        assert item["task_info"]["env_id"] == library_env().env_id
        assert item["tools"] == [t.model_dump(mode="json") for t in library_env().tools]
        assert item["steps"] == sum(1 for m in item["messages"] if m["role"] == "assistant")


def test_a_trajectory_with_parallel_calls_is_left_out_and_counted(store: Store, populated: Populated,
                                                                   tmp_path: Path) -> None:
    rows, manifest = _export(store, populated.run_id, tmp_path)
    parallel = [t.fingerprint for t in populated.trajectories
                if any(len(m.get("tool_calls") or []) > 1 for m in t.messages) and t.all_passed]
    assert len(parallel) == 1 and parallel[0] not in {r["id"] for r in rows}
    assert manifest.dropped["envscaler sft: message N makes N parallel tool calls (EnvScaler's step N needs one tool "
                            "message per assistant turn)"] == 1


def test_the_models_reasoning_is_kept_and_missing_reasoning_is_an_empty_string(
    store: Store, populated: Populated, runtime, tmp_path: Path  # type: ignore[no-untyped-def]
) -> None:
    class Thinking:
        name = "thinking"

        def __init__(self) -> None:
            self.turn = 0

        async def step(self, messages, tools):  # type: ignore[no-untyped-def]
            self.turn += 1
            if self.turn == 1:
                return AgentTurn(message={"role": "assistant", "content": None, "reasoning_content": "Lend b1 first.",
                                          "tool_calls": [{"id": "c1", "type": "function", "function": {
                                              "name": "lend_book", "arguments": '{"book_id": "b1", "member": "Ana"}'}}]})
            if self.turn == 2:
                return AgentTurn(message={"role": "assistant", "content": None, "tool_calls": [
                    {"id": "c2", "type": "function", "function": {
                        "name": "lend_book", "arguments": '{"book_id": "b2", "member": "Ana"}'}}]})
            return AgentTurn(message={"role": "assistant", "content": "Task Completed"})

    traj = asyncio.run(run_rollout(library_env(), verified(scenario()), runtime, None, Settings(), agent=Thinking(),
                                   sample=7))
    store.upsert([traj], populated.run_id)
    every_finished = Settings.model_validate({"rollout": {"require_all_passed": False}})
    rows, _ = _export(store, populated.run_id, tmp_path, every_finished)
    [row] = [r for r in rows if r["id"] == traj.fingerprint]
    assistants = [m for m in _as_step1_reads_it(row)["messages"] if m["role"] == "assistant"]
    assert [m["reasoning_content"] for m in assistants] == ["Lend b1 first.", "", ""]
    assert row["total_reward"] == traj.reward and row["traj_type"] == "non_conversational"


def test_the_file_is_one_json_list_even_when_no_trajectory_qualifies(store: Store, tmp_path: Path) -> None:
    from envscaler_core.models import Run

    store.save_run(Run(run_id="run-empty"))
    rows, manifest = _export(store, "run-empty", tmp_path)
    assert rows == [] and manifest.files[FILE].rows == 0


def test_the_summary_names_only_the_counts_of_the_formats_written(store: Store, populated: Populated,
                                                                  tmp_path: Path) -> None:
    """An outside check read "verified scenarios 0: rl rows 0" for a run with 10 verified scenarios,
    exported in EnvScaler's format only (nothing had counted them)."""
    _, manifest = _export(store, populated.run_id, tmp_path)
    text = "\n".join(manifest.summary_lines())
    assert "verified scenarios" not in text and "sft rows" not in text
    assert "envscaler format:" in text and f"{manifest.counts.envscaler_traj} SFT trajectories" in text
    both = export_run(store, populated.run_id, Settings(), tmp_path / "all", formats=["all"])
    assert "verified scenarios 2: rl rows 2" in "\n".join(both.summary_lines())
