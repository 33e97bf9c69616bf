"""Spec: SFT export = one OpenAI chat line (messages + tools) per trajectory the rollout filters keep."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from envscaler_core.config import Settings
from envscaler_core.export import export_run
from envscaler_core.rollout import run_rollout
from envscaler_core.store import Store
from tests.export.consumers import assert_openai_chat_row, load_with_datasets, read_jsonl, read_sft
from tests.export.sft_helpers import MalformedArgs, with_ids_of
from tests.export.records import Populated, verified
from tests.scenarios.helpers import library_env, scenario


def test_every_kept_trajectory_is_one_openai_chat_line(store: Store, populated: Populated, tmp_path: Path) -> None:
    manifest = export_run(store, populated.run_id, Settings(), tmp_path / "out")
    pairs = read_sft(tmp_path / "out" / populated.run_id)
    assert len(pairs) == manifest.counts.sft_rows == 3  # by default the reward-0 trajectory is not SFT data
    for row, _ in pairs:
        assert_openai_chat_row(row)
    stored = {t.fingerprint: t for t in populated.trajectories}
    for row, meta in pairs:
        assert row["messages"] == with_ids_of(row["messages"], stored[meta["id"]].messages)
        assert row["tools"] == [t.model_dump(mode="json") for t in library_env().tools]
        assert meta["reward"] == stored[meta["id"]].reward and meta["scenario_fp"] == stored[meta["id"]].scenario_fp


def test_parallel_tool_calls_keep_one_answer_per_call_id(store: Store, populated: Populated, tmp_path: Path) -> None:
    export_run(store, populated.run_id, Settings(), tmp_path)
    rows = read_jsonl(tmp_path / populated.run_id / "sft_messages.jsonl")
    parallel = [m for r in rows for m in r["messages"] if len(m.get("tool_calls") or []) == 2]
    assert len(parallel) == 1


def test_a_trainer_reads_it_with_the_datasets_library(store: Store, populated: Populated, tmp_path: Path) -> None:
    export_run(store, populated.run_id, Settings(), tmp_path / "out")
    path = tmp_path / "out" / populated.run_id / "sft_messages.jsonl"
    ds = load_with_datasets(path, tmp_path / "hf")
    assert ds.num_rows == 3 and {"messages", "tools"} <= set(ds.column_names)
    assert [ds[i]["messages"] for i in range(ds.num_rows)] == [r["messages"] for r in read_jsonl(path)]


def test_rollout_filters_decide_which_trajectories_are_exported(store: Store, populated: Populated, tmp_path: Path) -> None:
    settings = Settings.model_validate({"rollout": {"require_all_passed": True}})
    manifest = export_run(store, populated.run_id, settings, tmp_path)
    ids = {meta["id"] for _, meta in read_sft(tmp_path / populated.run_id)}
    failed = [t.fingerprint for t in populated.trajectories if not t.all_passed]
    assert len(failed) == 1 and failed[0] not in ids and len(ids) == 3
    assert manifest.dropped == {"trajectory: not all checks passed (reward N)": 1}


def test_a_trajectory_with_malformed_tool_arguments_is_not_exported(
    store: Store, populated: Populated, runtime, tmp_path: Path  # type: ignore[no-untyped-def]
) -> None:
    bad = asyncio.run(run_rollout(library_env(), verified(scenario()), runtime, None, Settings(), agent=MalformedArgs()))
    assert bad.termination == "agent_done"  # the rollout itself completed; only the export refuses it
    store.upsert([bad], populated.run_id)
    every_finished = Settings.model_validate({"rollout": {"require_all_passed": False}})  # reach the protocol check
    manifest = export_run(store, populated.run_id, every_finished, tmp_path)
    pairs = read_sft(tmp_path / populated.run_id)
    assert bad.fingerprint not in {meta["id"] for _, meta in pairs} and len(pairs) == 4
    assert manifest.dropped["trajectory: malformed OpenAI messages"] == 1
    assert json.loads(bad.messages[3]["content"])["error_kind"] == "schema"


def test_a_providers_extras_on_tool_calls_stay_out_of_the_export() -> None:
    """Gemini's thought signature rides on each call (`extra_content`) and goes back to the endpoint
    during the rollout; trainers and chat templates know only id, type and function."""
    from envscaler_core.export.sft import clean_messages

    call = {"id": "c1", "type": "function", "function": {"name": "get_book", "arguments": "{}"},
            "extra_content": {"google": {"thought_signature": "CqQB"}}}
    [message] = clean_messages([{"role": "assistant", "content": None, "tool_calls": [call]}])
    assert message["tool_calls"] == [{"id": "c1", "type": "function", "function": {"name": "get_book", "arguments": "{}"}}]


def test_a_trajectory_dropped_for_two_reasons_is_counted_once(store: Store, populated: Populated, tmp_path: Path) -> None:
    strict = Settings.model_validate({"rollout": {"require_all_passed": True, "min_steps": 100}})
    manifest = export_run(store, populated.run_id, strict, tmp_path)
    assert sum(manifest.dropped.values()) == len(populated.trajectories) == manifest.counts.trajectories
    assert manifest.counts.trajectories_kept == 0
    assert any(" + " in reason for reason in manifest.dropped), manifest.dropped
