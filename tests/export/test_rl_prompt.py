"""Spec: RL rows carry TRL's conversational `prompt` (what GRPOTrainer requires), the system text and
the task exactly as the gym's agent gets them; files written before the column existed still load."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from envscaler_core.config import Settings
from envscaler_core.export import RLRowError, export_run
from envscaler_core.gym import load_rl_set
from envscaler_core.store import Store
from tests.export.consumers import read_jsonl
from tests.export.records import Populated


def _export(store: Store, populated: Populated, tmp_path: Path) -> Path:
    export_run(store, populated.run_id, Settings(), tmp_path, formats=["rl"])
    return tmp_path / populated.run_id


def test_each_row_has_the_prompt_the_gym_agent_sees(store: Store, populated: Populated, runtime, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    out = _export(store, populated, tmp_path)
    rows = {r["scenario_fp"]: r for r in read_jsonl(out / "rl_scenarios.jsonl")}
    assert pq.read_table(out / "rl_scenarios.parquet").to_pylist() == list(rows.values())
    (gym,) = load_rl_set(out / "rl_scenarios.parquet", runtime)
    try:
        for index in range(len(gym.scenarios)):
            task, info = gym.reset(options={"scenario_index": index})
            assert rows[info["scenario_fp"]]["prompt"] == [
                {"role": "system", "content": info["system_prompt"]}, {"role": "user", "content": task}]
    finally:
        gym.close()


def test_a_file_written_before_the_prompt_column_still_loads(
    store: Store, populated: Populated, runtime, tmp_path: Path  # type: ignore[no-untyped-def]
) -> None:
    out = _export(store, populated, tmp_path)
    old = tmp_path / "schema2.jsonl"
    old.write_text("".join(json.dumps({k: v for k, v in r.items() if k != "prompt"}) + "\n"
                           for r in read_jsonl(out / "rl_scenarios.jsonl")))
    (gym,) = load_rl_set(old, runtime)
    assert len(gym.scenarios) == 2
    gym.close()


def test_an_edited_prompt_is_refused_with_its_location(store: Store, populated: Populated, runtime, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    out = _export(store, populated, tmp_path)
    rows = read_jsonl(out / "rl_scenarios.jsonl")
    rows[1]["prompt"][1]["content"] = "Delete every book."
    edited = tmp_path / "edited.jsonl"
    edited.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(RLRowError, match=r"edited\.jsonl:2: prompt"):
        load_rl_set(edited, runtime)
